package starter

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// DefaultApplyConcurrency bounds how many pools ApplyPools applies at once:
// enough to hide round trips, few enough not to swamp a small server.
const DefaultApplyConcurrency = 16

// ApplyOptions tune ApplyPools.
type ApplyOptions struct {
	// TaskQueue for newly started pools; empty is the default queue.
	TaskQueue string
	// Concurrency bounds pools in flight; 0 is DefaultApplyConcurrency.
	Concurrency int
	// Progress, when set, is called after each pool with the counts so far.
	Progress func(done, total int)
	// ExpiryDefaulted names the pools (by workflow ID) whose expireAfter
	// is the spec file's default, not written (PoolEntry.ExpiryDefaulted):
	// a new one is created with it, a running one keeps its own.
	ExpiryDefaulted map[string]bool
}

// PoolApplied is one pool's outcome. Attempted is false for a pool not
// started because an earlier one failed.
type PoolApplied struct {
	Pool      string
	Attempted bool
	Result    ApplyResult
	Err       error
	// Expiry says what became of a defaulted expireAfter ("" when the
	// spec wrote one): on by default for a new pool, kept for a running one.
	Expiry string
}

// ApplyPools applies pools that CheckApply has passed, a bounded number at
// once. Which pools already run is read from one visibility listing, so a
// new pool costs no describe and an unchanged one only a status query.
// After the first failure no further pool is started; pools in flight
// finish, and every outcome is reported in the input's order.
func ApplyPools(ctx context.Context, c client.Client, namespace string, pools []contract.PoolSpec, opts ApplyOptions) ([]PoolApplied, error) {
	running, err := runningPoolIDs(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	n := opts.Concurrency
	if n <= 0 {
		n = DefaultApplyConcurrency
	}
	out := make([]PoolApplied, len(pools))
	for i, p := range pools {
		out[i].Pool = p.Key.WorkflowID()
	}
	var (
		failed atomic.Bool
		done   atomic.Int64
		mu     sync.Mutex // serializes Progress calls
		wg     sync.WaitGroup
	)
	next := make(chan int)
	for range min(n, len(pools)) {
		wg.Go(func() {
			for i := range next {
				defaulted := opts.ExpiryDefaulted[pools[i].Key.WorkflowID()]
				res, exp, err := applyListed(ctx, c, pools[i], opts.TaskQueue, running, defaulted)
				out[i].Attempted, out[i].Result, out[i].Err = true, res, err
				if err == nil && defaulted {
					out[i].Expiry = expiryNote(res, exp)
				}
				if err != nil {
					failed.Store(true)
				}
				d := int(done.Add(1))
				if opts.Progress != nil {
					mu.Lock()
					opts.Progress(d, len(pools))
					mu.Unlock()
				}
			}
		})
	}
	for i := range pools {
		if failed.Load() || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return out, nil
}

// listedPool is what the visibility listing says of a running pool.
type listedPool struct {
	// policyHash is the pool's own MemoPolicyHash, "" if it writes none.
	policyHash string
}

// applyListed skips a pool whose own memo shows the file's policy, and
// otherwise applies it knowing whether it runs. keepExpiry: the spec's
// expireAfter is the default, which a running pool does not take
// (applyChecked), so its memo may also show the policy with expiry off.
func applyListed(ctx context.Context, c client.Client, spec contract.PoolSpec, taskQueue string, running map[string]listedPool, keepExpiry bool) (ApplyResult, types.Duration, error) {
	listed, isRunning := running[spec.Key.WorkflowID()]
	if isRunning && listed.policyHash != "" {
		if listed.policyHash == contract.PolicyHash(spec.Policy) {
			return PoolUnchanged, spec.Policy.ExpireAfter, nil
		}
		off := spec.Policy
		off.ExpireAfter = 0
		if keepExpiry && listed.policyHash == contract.PolicyHash(off) {
			return PoolUnchanged, 0, nil
		}
	}
	return applyChecked(ctx, c, spec, taskQueue, isRunning, keepExpiry)
}

// expiryNote tells what a spec's unwritten expireAfter did to the pool.
func expiryNote(res ApplyResult, exp types.Duration) string {
	switch {
	case res == PoolCreated && exp > 0:
		return fmt.Sprintf("expireAfter %s by default: nodes older than that are replaced (write expireAfter: 0s to keep them)", shortDuration(exp))
	case res != PoolCreated && exp == 0:
		return "expireAfter not written: expiry stays off for this running pool (write expireAfter to turn it on)"
	}
	return ""
}

// runningPoolIDs lists every open pool workflow in one page walk, with
// the policy hash each pool keeps in its memo.
func runningPoolIDs(ctx context.Context, c client.Client, namespace string) (map[string]listedPool, error) {
	summaries, err := ListPools(ctx, c, namespace, PoolFilter{})
	if err != nil {
		return nil, err
	}
	ids := make(map[string]listedPool, len(summaries))
	for _, s := range summaries {
		ids[s.ID] = listedPool{policyHash: s.policyHash}
	}
	return ids, nil
}

// shortDuration writes 720h for 720h0m0s.
func shortDuration(d types.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "h0m0s") {
		return strings.TrimSuffix(s, "0m0s")
	}
	if strings.HasSuffix(s, "m0s") {
		return strings.TrimSuffix(s, "0s")
	}
	return s
}
