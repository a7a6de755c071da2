package e2e

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
	"github.com/hanzoai/visor-fleet/workflows"
)

// TestAWorkerLostMidProvisionDoesNotBlindThePool kills the worker running
// the pool's Provision right after the provider applied it (the worker's
// process stays stuck, as a partitioned host's does: it never answers and
// never heartbeats again). A new worker starts; within 30 s the pool has
// applied an observation sent after it started and decided again, and the
// group exists once, at the target asked for.
func TestAWorkerLostMidProvisionDoesNotBlindThePool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := bareServer(ctx, t, t.TempDir())
	sp, key := spec(starter.DemoDemand{Shape: "steady", Pods: 0, Requests: types.Resources{MilliCPU: 100, Memory: types.GiB}})
	fleet, err := devfleet.New(sp, devfleet.Options{ProvisionDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	fleet.Run(simCtx, 200*time.Millisecond)

	// The first worker's provider applies the first change and then hangs.
	stuck := &stuckAfterApply{applied: make(chan struct{}), release: make(chan struct{})}
	defer close(stuck.release)
	lost := workers.New(c, contract.DefaultTaskQueue, &activities.Activities{Clusters: stuck.wrap(fleet.Clusters), Temporal: c}, worker.Options{})
	if err := lost.Start(); err != nil {
		t.Fatal(err)
	}
	policy := testsuite.FastPolicy() // floor 1: the pool provisions at once
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: key.WorkflowID(), TaskQueue: contract.DefaultTaskQueue},
		contract.PoolWorkflow, workflows.PoolInput{Spec: contract.PoolSpec{Key: key, Policy: policy}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck.applied:
	case <-ctx.Done():
		t.Fatal("the first provision never reached the provider")
	}
	// The activity heartbeats what it did; the SDK sends it within its
	// throttle interval. Then the worker is lost: it polls no more and its
	// activity's context is cancelled, so its heartbeats stop; the
	// activity itself never returns.
	waitForHeartbeat(ctx, t, c, key.WorkflowID(), "applied")
	go lost.Stop()

	changes := &countingChanges{}
	second := workers.New(c, contract.DefaultTaskQueue, &activities.Activities{Clusters: changes.wrap(fleet.Clusters), Temporal: c}, worker.Options{})
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	secondUp := time.Now()

	// The watcher's part, played by the test: an observation each second,
	// sampled from the cluster as the watcher samples it.
	observer := &activities.Activities{Clusters: fleet.Clusters}
	go func() {
		for ctx.Err() == nil {
			if obs, err := observer.ObservePool(ctx, key); err == nil {
				_ = c.SignalWorkflow(ctx, key.WorkflowID(), "", contract.SignalObserve, obs)
			}
			time.Sleep(time.Second)
		}
	}()

	var (
		st             contract.PoolStatus
		observedInCall bool
	)
	for deadline := secondUp.Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the new worker started the pool has not applied an observation and decided again: %+v", st)
		}
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		st, err = starter.PoolStatus(qctx, c, key)
		qcancel()
		if err != nil {
			continue
		}
		fresh := st.LastObservationAt.After(secondUp)
		if fresh && provisionPending(ctx, c, key.WorkflowID()) {
			observedInCall = true
		}
		if fresh && decided(st, "asked for 1 × ") {
			t.Logf("observation applied and decided again %s after the new worker started", time.Since(secondUp).Round(100*time.Millisecond))
			break
		}
	}
	if !observedInCall {
		t.Error("no observation was applied while the cut provision was retried: the pool was blind during the call")
	}
	inv := fleet.Sims[key.Cluster].Inventory()
	groups, machines := 0, 0
	for _, g := range inv.Groups {
		if g.Pool == key {
			groups++
			machines += g.Group.TargetSize
		}
	}
	if groups != 1 || machines != 1 {
		t.Fatalf("the provider has %d groups with %d machines for the pool; want the one provision, once", groups, machines)
	}
	if n := changes.n.Load(); n != 0 {
		t.Errorf("the retry asked the provider for %d changes; its heartbeat said the change was applied", n)
	}
}

// waitForHeartbeat waits until the pool's pending Provision has sent
// heartbeat details holding want.
func waitForHeartbeat(ctx context.Context, t *testing.T, c client.Client, id, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			continue
		}
		for _, a := range d.PendingActivities {
			for _, p := range a.GetHeartbeatDetails().GetPayloads() {
				if a.ActivityType.GetName() == "Provision" && strings.Contains(string(p.GetData()), want) {
					return
				}
			}
		}
	}
	t.Fatalf("the provision's heartbeat never said %q", want)
}

func decided(st contract.PoolStatus, outcome string) bool {
	for _, d := range st.Decisions {
		if len(d.Outcome) >= len(outcome) && d.Outcome[:len(outcome)] == outcome {
			return true
		}
	}
	return false
}

// provisionPending: the pool's Provision is still scheduled or running.
func provisionPending(ctx context.Context, c client.Client, id string) bool {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(dctx, id, "")
	if err != nil {
		return false
	}
	for _, a := range d.PendingActivities {
		if a.ActivityType.GetName() == "Provision" && a.State != enumspb.PENDING_ACTIVITY_STATE_UNSPECIFIED {
			return true
		}
	}
	return false
}

// stuckAfterApply is a provider whose first change is applied, and whose
// caller then hangs, reading the result, until release: a worker lost
// right after the provider took the call.
type stuckAfterApply struct {
	created atomic.Bool
	once    sync.Once
	applied chan struct{}
	release chan struct{}
}

func (s *stuckAfterApply) wrap(inner workers.StaticClusters) workers.StaticClusters {
	out := workers.StaticClusters{}
	for id, cl := range inner {
		cl.Provider = &stuckProvider{Provider: cl.Provider, s: s}
		out[id] = cl
	}
	return out
}

type stuckProvider struct {
	connectors.Provider
	s *stuckAfterApply
}

func (p *stuckProvider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	g, err := p.Provider.CreateNodeGroup(ctx, spec, key)
	if err == nil {
		p.s.created.Store(true)
	}
	return g, err
}

// NodeGroups hangs the first read after the change: the activity has
// heartbeat that the change was applied and is reading the result.
func (p *stuckProvider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	hang := false
	if p.s.created.Load() {
		p.s.once.Do(func() { hang = true })
	}
	if hang {
		close(p.s.applied)
		<-p.s.release
		return nil, context.Canceled
	}
	return p.Provider.NodeGroups(ctx, pool)
}

// countingChanges counts the changes the second worker asks for.
type countingChanges struct{ n atomic.Int32 }

func (c *countingChanges) wrap(inner workers.StaticClusters) workers.StaticClusters {
	out := workers.StaticClusters{}
	for id, cl := range inner {
		cl.Provider = &countingProvider{Provider: cl.Provider, n: &c.n}
		out[id] = cl
	}
	return out
}

type countingProvider struct {
	connectors.Provider
	n *atomic.Int32
}

func (p *countingProvider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	p.n.Add(1)
	return p.Provider.CreateNodeGroup(ctx, spec, key)
}

func (p *countingProvider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	p.n.Add(1)
	return p.Provider.SetTargetSize(ctx, groupID, target, key)
}
