package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	sdklog "go.temporal.io/sdk/log"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// queryConcurrency bounds the status queries in flight: each is a
// workflow task on some worker, and the machine is small.
const queryConcurrency = 8

// decidedAgain is how long after since every pool had decided again: its
// status shows an observation taken after since. A pool wakes on an
// observation (the watcher's signal or its own resync), takes it in and
// decides in the same workflow task, so a fresh observation in its state
// is a decision made. It gives up at limit and names the pools that had not.
func (d *Deployment) decidedAgain(ctx context.Context, since time.Time, limit time.Duration) (time.Duration, []string) {
	keys := make([]types.PoolKey, 0, len(d.Spec.Pools))
	for _, p := range d.Spec.Pools {
		keys = append(keys, p.Key)
	}
	var last time.Time
	left := d.pollPools(ctx, keys, since.Add(limit), func(_ types.PoolKey, st contract.PoolStatus) bool {
		if !st.LastObservationAt.After(since) {
			return false
		}
		if st.LastObservationAt.After(last) {
			last = st.LastObservationAt
		}
		return true
	})
	if len(left) > 0 {
		ids := make([]string, 0, len(left))
		for _, k := range left {
			ids = append(ids, k.WorkflowID())
		}
		sort.Strings(ids)
		return time.Since(since), ids
	}
	return last.Sub(since), nil
}

// pollPools queries the pools' status, queryConcurrency at a time, once a
// second, until accept has taken each or deadline passes, and returns the
// pools accept never took. accept is called one at a time.
func (d *Deployment) pollPools(ctx context.Context, keys []types.PoolKey, deadline time.Time, accept func(types.PoolKey, contract.PoolStatus) bool) []types.PoolKey {
	pending := map[types.PoolKey]bool{}
	for _, k := range keys {
		pending[k] = true
	}
	var mu sync.Mutex
	for len(pending) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		round := make([]types.PoolKey, 0, len(pending))
		for k := range pending {
			round = append(round, k)
		}
		sem := make(chan struct{}, queryConcurrency)
		var wg sync.WaitGroup
		for _, k := range round {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				// A round of slow answers must not outlast the deadline:
				// 600 pools timing out at 10 s, 8 at a time, are 12 minutes.
				if time.Now().After(deadline) {
					return
				}
				qctx, cancel := context.WithDeadline(ctx, minTime(deadline, time.Now().Add(10*time.Second)))
				st, err := starter.PoolStatus(qctx, d.Client, k)
				cancel()
				if err != nil {
					return // not answering yet (a worker or the server is down): ask again
				}
				mu.Lock()
				if accept(k, st) {
					delete(pending, k)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(pending) > 0 {
			time.Sleep(time.Second)
		}
	}
	left := make([]types.PoolKey, 0, len(pending))
	for k := range pending {
		left = append(left, k)
	}
	return left
}

// kill is one process killed, and what followed.
type kill struct {
	What    string
	At      time.Time
	Decided time.Duration // until every pool decided again
	Limit   time.Duration
	NotYet  []string
}

func (k kill) String() string {
	s := fmt.Sprintf("%s at %s: every pool decided again after %s (target %s)", k.What, k.At.UTC().Format("15:04:05"), k.Decided.Round(100*time.Millisecond), k.Limit)
	if len(k.NotYet) > 0 {
		s += fmt.Sprintf("; %d pools had not, e.g. %s", len(k.NotYet), k.NotYet[0])
	}
	return s
}

func quietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}
