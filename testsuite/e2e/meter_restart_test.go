package e2e

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
	"github.com/hanzoai/visor-fleet/workflows"
)

// seedPoolWorkflow hands a pool a durable state the way its own earlier run
// would, by continuing as new into PoolWorkflow: a pool ignores the state
// of a start that no earlier run handed over.
const seedPoolWorkflow = "SeedPoolState"

func seedPool(ctx workflow.Context, in workflows.PoolInput) error {
	return workflow.NewContinueAsNewError(ctx, contract.PoolWorkflow, in)
}

// bareServer starts an embedded Temporal server without the stack's
// identity, worker or fleet (the test brings its own workers) and dials it.
func bareServer(ctx context.Context, t *testing.T, dir string) client.Client {
	t.Helper()
	srv, err := devserver.Start(ctx, devserver.Options{Memory: true, GRPCPort: testsuite.FreePort(t), UIPort: -1, LogLevel: "error",
		SearchAttributes: starter.SearchAttributeTypes(), LogFile: filepath.Join(dir, "temporal.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c, err := client.Dial(client.Options{HostPort: srv.Address()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestMeteringSurvivesAWorkerDyingMidReport: a pool owes three hours of
// node-hours (its workers were down). The worker dies while reporting the
// second hour, after the ledger already took it; a new worker picks the
// pool up. Every hour ends up in the ledger exactly once.
func TestMeteringSurvivesAWorkerDyingMidReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c := bareServer(ctx, t, dir)
	ledger, err := meterledger.Open(filepath.Join(dir, "meter.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.Close()
	sp, key := spec(starter.DemoDemand{Shape: "steady", Pods: 0, Requests: types.Resources{MilliCPU: 100, Memory: types.GiB}})
	fleet, err := devfleet.New(sp, devfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}

	dying := &dyingSink{ledger: ledger, reached: make(chan struct{})}
	first := workers.New(c, contract.DefaultTaskQueue, &activities.Activities{Clusters: fleet.Clusters, Temporal: c, Meter: dying}, worker.Options{})
	first.RegisterWorkflowWithOptions(seedPool, workflow.RegisterOptions{Name: seedPoolWorkflow})
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}

	// The pool's durable state says: the provider listed two machines
	// running since three hours ago, nothing metered since. The provider
	// no longer lists them (nor their end), so they ran until the pool's
	// first read: every one of the three hours holds two machine-hours.
	now := time.Now().UTC()
	from := now.Truncate(time.Hour).Add(-3 * time.Hour)
	state := &workflows.PoolState{Policy: testsuite.FastPolicy(), MeterCursor: from, Gate: contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true}}
	if _, err := state.Machines.Take(from, []metering.MachineRun{{ID: "i-1", Size: "sim-2c4g", Created: from}, {ID: "i-2", Size: "sim-2c4g", Created: from}}, nil); err != nil {
		t.Fatal(err)
	}
	p := contract.PoolSpec{Key: key, Policy: testsuite.FastPolicy()}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: key.WorkflowID(), TaskQueue: contract.DefaultTaskQueue},
		seedPoolWorkflow, workflows.PoolInput{Spec: p, State: state}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dying.reached:
	case <-ctx.Done():
		t.Fatal("the second hour's report never started")
	}
	first.Stop() // the worker dies with the report written but not answered

	second := workers.New(c, contract.DefaultTaskQueue, &activities.Activities{Clusters: fleet.Clusters, Temporal: c, Meter: ledger}, worker.Options{})
	second.RegisterWorkflowWithOptions(seedPool, workflow.RegisterOptions{Name: seedPoolWorkflow})
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	defer second.Stop()

	for {
		// Status first, then the ledger: the cursor moves only after the
		// ledger took the hour, so rows listed after it hold every hour it
		// covers (listed before, an hour reported in between was missing).
		st, qerr := starter.PoolStatus(ctx, c, key)
		rows, err := ledger.List(ctx, meterledger.Filter{Pool: key.WorkflowID()})
		if err != nil {
			t.Fatal(err)
		}
		if qerr == nil && !st.MeteredThrough.Before(from.Add(3*time.Hour)) {
			if len(rows) != 3 {
				t.Fatalf("ledger has %d rows for 3 hours: %+v", len(rows), rows)
			}
			seen := map[string]bool{}
			for _, r := range rows {
				if seen[r.Idempotency] || r.Value != 2 {
					t.Fatalf("bad row %+v (rows %+v)", r, rows)
				}
				seen[r.Idempotency] = true
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("metering did not finish: status %+v %v, rows %+v", st.MeteredThrough, qerr, rows)
		}
		time.Sleep(time.Second)
	}
}

// dyingSink writes to the ledger, and on the second report hangs after
// writing, as a worker that dies before answering.
type dyingSink struct {
	ledger  *meterledger.Ledger
	mu      sync.Mutex
	calls   int
	reached chan struct{}
}

func (d *dyingSink) Report(ctx context.Context, events []metering.Event) error {
	if err := d.ledger.Report(ctx, events); err != nil {
		return err
	}
	d.mu.Lock()
	d.calls++
	n := d.calls
	d.mu.Unlock()
	if n == 2 {
		close(d.reached)
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}
