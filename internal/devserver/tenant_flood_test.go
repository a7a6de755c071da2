package devserver

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/auth/frontend"
	"github.com/hanzoai/visor-fleet/contract"
)

// signalCounter stands in for a pool on the shared worker: every signal
// is a workflow task (as an observe is), the status query answers with
// how many it has seen.
func signalCounter(ctx workflow.Context) error {
	seen := 0
	if err := workflow.SetQueryHandler(ctx, contract.QueryStatus, func() (int, error) { return seen, nil }); err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, contract.SignalObserve)
	for {
		ch.Receive(ctx, nil)
		seen++
	}
}

// floodResult is another org's experience while acme floods.
type floodResult struct {
	queryBase, queryFlood   time.Duration // p99 of globex's status query
	decideBase, decideFlood time.Duration // p99 of globex's signal until its pool has seen it
	refused, sent           int64
}

// TestTenantFloodDoesNotSlowAnotherOrg measures, on the real embedded
// server and one shared worker, what acme's flood of pool starts and
// signals does to globex's query and signal-to-decision latency: with the
// frontend's per-org quotas, and without them (a quota too large to
// bind). The quotas must keep globex within 2 s of its baseline. It takes
// a few minutes: set VISOR_FLOOD_TEST=1.
func TestTenantFloodDoesNotSlowAnotherOrg(t *testing.T) {
	if os.Getenv("VISOR_FLOOD_TEST") == "" {
		t.Skip("a measurement of a few minutes: set VISOR_FLOOD_TEST=1")
	}
	unbounded := frontend.Quota{MaxPools: 1 << 30, AppliesPerMinute: 1 << 30, SignalsPerSecond: 1 << 30}
	for _, c := range []struct {
		name  string
		quota frontend.Quota
	}{{"default quotas", frontend.DefaultQuota}, {"no quotas", unbounded}} {
		t.Run(c.name, func(t *testing.T) {
			r := flood(t, c.quota)
			t.Logf("%s: globex query p99 %v → %v under flood, signal-to-seen p99 %v → %v; acme sent %d, refused %d",
				c.name, r.queryBase, r.queryFlood, r.decideBase, r.decideFlood, r.sent, r.refused)
			if c.quota == frontend.DefaultQuota && (r.queryFlood-r.queryBase > 2*time.Second || r.decideFlood-r.decideBase > 2*time.Second) {
				t.Errorf("with quotas, acme's flood slowed globex by more than 2 s: query %v → %v, decision %v → %v", r.queryBase, r.queryFlood, r.decideBase, r.decideFlood)
			}
		})
	}
}

func flood(t *testing.T, q frontend.Quota) floodResult {
	s := startTrusted(t, func(o *Options) { o.TenantQuota = q })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := worker.New(s.admin, contract.DefaultTaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(signalCounter, workflow.RegisterOptions{Name: contract.PoolWorkflow})
	must(t, w.Start())
	defer w.Stop()
	const globex = "pool/globex/ml/infer/sim/sim-east"
	_, err := s.admin.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: globex, TaskQueue: contract.DefaultTaskQueue}, contract.PoolWorkflow)
	must(t, err)
	const acme = "pool/acme/shop/api/sim/sim-east"
	_, err = s.tenant.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: acme, TaskQueue: contract.DefaultTaskQueue}, contract.PoolWorkflow)
	must(t, err)

	// probe measures globex for d: its status query, and a signal until
	// the pool has seen it. A call that fails counts as a sample as long
	// as it took (a query timed out is a query that waited).
	status := func() (int, error) {
		qctx, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		resp, err := s.admin.QueryWorkflow(qctx, globex, "", contract.QueryStatus)
		if err != nil {
			return 0, err
		}
		var seen int
		return seen, resp.Get(&seen)
	}
	probe := func(d time.Duration) (query, decide time.Duration) {
		var qs, ds []time.Duration
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			start := time.Now()
			before, err := status()
			qs = append(qs, time.Since(start))
			if err != nil {
				t.Logf("globex status: %v", err)
				continue
			}
			start = time.Now()
			must(t, s.admin.SignalWorkflow(ctx, globex, "", contract.SignalObserve, nil))
			for seen := before; seen <= before && time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
				if n, err := status(); err == nil {
					seen = n
				}
			}
			ds = append(ds, time.Since(start))
		}
		return p99(qs), p99(ds)
	}
	var r floodResult
	r.queryBase, r.decideBase = probe(10 * time.Second)

	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; fctx.Err() == nil; i++ {
				var err error
				if g%4 == 0 { // a quarter apply new pools, the rest signal
					_, err = s.tenant.ExecuteWorkflow(fctx, client.StartWorkflowOptions{ID: fmt.Sprintf("pool/acme/shop/api-%d-%d/sim/sim-east", g, i), TaskQueue: contract.DefaultTaskQueue}, contract.PoolWorkflow)
				} else {
					err = s.tenant.SignalWorkflow(fctx, acme, "", contract.SignalObserve, nil)
				}
				atomic.AddInt64(&r.sent, 1)
				if err != nil && fctx.Err() == nil {
					atomic.AddInt64(&r.refused, 1)
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	r.queryFlood, r.decideFlood = probe(20 * time.Second)
	stop()
	wg.Wait()
	return r
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*99/100)]
}
