package starter

import (
	"context"
	"sync"
	"sync/atomic"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
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
}

// PoolApplied is one pool's outcome. Attempted is false for a pool not
// started because an earlier one failed.
type PoolApplied struct {
	Pool      string
	Attempted bool
	Result    ApplyResult
	Err       error
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
				res, err := applyListed(ctx, c, pools[i], opts.TaskQueue, running)
				out[i].Attempted, out[i].Result, out[i].Err = true, res, err
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
// otherwise applies it knowing whether it runs.
func applyListed(ctx context.Context, c client.Client, spec contract.PoolSpec, taskQueue string, running map[string]listedPool) (ApplyResult, error) {
	listed, isRunning := running[spec.Key.WorkflowID()]
	if isRunning && listed.policyHash != "" && listed.policyHash == contract.PolicyHash(spec.Policy) {
		return PoolUnchanged, nil
	}
	return applyChecked(ctx, c, spec, taskQueue, isRunning)
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
