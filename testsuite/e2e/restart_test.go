package e2e

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

// TestRestartKeepsEveryPoolsState stops the whole embedded system and
// starts it again on the same data directory: the pool resumes with its
// decision sequence, decision log and nodes, and registration changes
// nothing.
func TestRestartKeepsEveryPoolsState(t *testing.T) {
	dir := t.TempDir()
	sp, key := spec(twoNodesOfDemand())
	first := testsuite.StartStack(t, sp, dir)
	before := testsuite.WaitForPool(t, first, key, 90*time.Second, "scaled up", func(st contract.PoolStatus) bool {
		return st.PendingPods == 0 && st.Nodes >= 2
	})
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	second := testsuite.StartStack(t, sp, dir)
	after := testsuite.WaitForPool(t, second, key, 60*time.Second, "resumed", func(st contract.PoolStatus) bool {
		return st.Seq >= before.Seq && st.Nodes >= before.Nodes
	})
	if len(after.Decisions) < len(before.Decisions) || after.Decisions[0].Seq != before.Decisions[0].Seq {
		t.Fatalf("decision log lost across restart: before %+v, after %+v", before.Decisions, after.Decisions)
	}
	if !after.LastScaleUp.Equal(before.LastScaleUp) && after.LastScaleUp.Before(before.LastScaleUp) {
		t.Fatalf("cooldown clock went back: %s -> %s", before.LastScaleUp, after.LastScaleUp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := starter.ApplyPool(ctx, second.Client, sp.Pools[0].PoolSpec, "")
	if err != nil || res != starter.PoolUnchanged {
		t.Fatalf("re-applying the same spec after restart: %v %v", res, err)
	}
}

// TestBYOTaskQueueRunsProvisioningOnTheTenantsWorker gives a pool its own
// provider task queue, as a tenant's own cloud account would have: the
// pool's plan, provision and observe activities must run on the worker
// polling that queue (the one holding the tenant's credentials).
func TestBYOTaskQueueRunsProvisioningOnTheTenantsWorker(t *testing.T) {
	sp, key := spec(twoNodesOfDemand())
	sp.Pools[0].ProviderTaskQueue = "tenant-acme"
	sp.Clusters[0].Tier = contract.TierBYO // the tenant's own account
	s := testsuite.StartStack(t, sp, "")

	served := &countingClusters{inner: s.Fleet.Clusters, calls: map[string]int{}}
	tenant := worker.New(s.Client, "tenant-acme", worker.Options{})
	tenant.RegisterActivity(&activities.Activities{Clusters: served, Temporal: s.Client})
	if err := tenant.Start(); err != nil {
		t.Fatal(err)
	}
	defer tenant.Stop()

	testsuite.WaitForPool(t, s, key, 90*time.Second, "scaled up through the tenant's worker, billed as BYO", func(st contract.PoolStatus) bool {
		return st.PendingPods == 0 && st.Nodes >= 2 && st.Tier == contract.TierBYO
	})
	requireBYOMetered(t, s, key)
	served.mu.Lock()
	defer served.mu.Unlock()
	for _, name := range []string{"PlanScaleUp", "Provision"} {
		if served.calls[name] == 0 {
			t.Errorf("%s never ran on the tenant's queue: %v", name, served.calls)
		}
	}
	if served.calls["WatchCluster"] != 0 || served.calls["ReportMeter"] != 0 {
		t.Errorf("platform activities ran on the tenant's queue: %v", served.calls)
	}
}

// countingClusters records which activity types resolved a cluster, and
// checks they ran on the tenant's queue.
type countingClusters struct {
	inner workers.StaticClusters
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingClusters) Cluster(ctx context.Context, id string) (connectors.Cluster, error) {
	info := activity.GetInfo(ctx)
	c.mu.Lock()
	if info.TaskQueue == "tenant-acme" {
		c.calls[info.ActivityType.Name]++
	}
	c.mu.Unlock()
	return c.inner.Cluster(ctx, id)
}

// requireBYOMetered deregisters the pool (which meters its hour in
// progress) and checks the platform's ledger: one management-plane
// pool-hour row for the pool, carrying its node-hours as a dimension,
// and no node-hours billed for nodes the tenant's cloud pays for.
func requireBYOMetered(t *testing.T, s *devstack.Stack, key types.PoolKey) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := starter.DeregisterPool(ctx, s.Client, key, contract.DeregisterRequest{Reason: "e2e: check the meter"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Client.GetWorkflow(ctx, key.WorkflowID(), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Ledger.List(ctx, meterledger.Filter{Pool: key.WorkflowID()})
	if err != nil {
		t.Fatal(err)
	}
	// One row per UTC hour the test touched: one, or two across a boundary.
	if len(rows) == 0 || len(rows) > 2 {
		t.Fatalf("want a pool-hours row per hour the BYO pool ran, got %+v", rows)
	}
	pool, nodeHours := 0.0, 0.0
	for _, r := range rows {
		if r.MeterID != metering.MeterPoolHours || r.Tier != contract.TierBYO || r.Size != "" || r.Cluster != key.Cluster || r.Project != key.Project {
			t.Fatalf("BYO row bills the wrong thing: %+v", r)
		}
		nh, err := strconv.ParseFloat(r.Dimensions[metering.DimNodeHours], 64)
		if err != nil {
			t.Fatalf("the node-hours the tenant's cloud ran are not told: %q (%v)", r.Dimensions[metering.DimNodeHours], err)
		}
		pool, nodeHours = pool+r.Value, nodeHours+nh
	}
	// The pool lived for the test's few minutes at most.
	if pool <= 0 || pool > 0.25 || nodeHours <= 0 {
		t.Fatalf("pool-hours %v, node-hours %v: not what a pool of a few minutes with nodes ran", pool, nodeHours)
	}
}
