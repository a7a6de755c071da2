package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

func spec(shape starter.DemoDemand) (starter.SpecFile, types.PoolKey) {
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "sim-e2e"}
	return starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-e2e", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
		Pools:    []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: testsuite.FastPolicy()}, Demo: &shape}},
	}, key
}

// TestPoolScalesUpAndDownOnTheSimulatedFleet runs the whole system: demand
// arrives, pods go unschedulable, the watcher signals, the pool sizes and
// provisions; when demand leaves, nodes go idle and are drained and removed.
func TestPoolScalesUpAndDownOnTheSimulatedFleet(t *testing.T) {
	sp, key := spec(twoNodesOfDemand())
	s := testsuite.StartStack(t, sp, "")

	up := testsuite.WaitForPool(t, s, key, 90*time.Second, "scaled up for 8 pods with none pending", func(st contract.PoolStatus) bool {
		return st.Nodes >= 2 && st.PendingPods == 0 && hasAction(st, "scale-up")
	})
	t.Logf("scaled up to %d nodes: %+v", up.Nodes, up.Decisions)

	// The watcher reports the cluster's observed half signed with the
	// enrollment token; the cluster workflow accepted it.
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cs, err := starter.ClusterStatus(ctx, s.Client, "sim-e2e")
		cancel()
		if err == nil && cs.Observed.AgentVersion == activities.WatcherVersion && cs.Observed.Nodes >= 2 && cs.Observed.SyncState == contract.SyncConnected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no signed observed report accepted: %+v %v", cs.Observed, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// Demand leaves: nodes go idle and are removed down to the floor.
	if err := s.Fleet.Sims["sim-e2e"].AddDemand(key, demand(0)); err != nil {
		t.Fatal(err)
	}
	down := testsuite.WaitForPool(t, s, key, 120*time.Second, "scaled down to the floor", func(st contract.PoolStatus) bool {
		return st.Nodes == st.Policy.MinNodes && hasAction(st, "scale-down")
	})
	for _, d := range down.Decisions {
		if d.Action == "scale-down" && len(d.Removed) == 0 {
			t.Errorf("scale-down decision removed nothing: %+v", d)
		}
	}
}

// TestScaleUpdateRejectedOutsideBounds checks the validator over the wire.
func TestScaleUpdateRejectedOutsideBounds(t *testing.T) {
	sp, key := spec(starter.DemoDemand{Shape: "steady", Pods: 0, Requests: types.Resources{MilliCPU: 100, Memory: types.GiB}})
	s := testsuite.StartStack(t, sp, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := starter.ScalePool(ctx, s.Client, key, contract.ScaleRequest{Target: 99, Reason: "too many"})
	if err == nil || !strings.Contains(err.Error(), "target 99 is outside [minNodes 1, maxNodes 6]") {
		t.Fatalf("err = %v", err)
	}
	acc, err := starter.ScalePool(ctx, s.Client, key, contract.ScaleRequest{Target: 3, Reason: "launch day", RequestedBy: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Target != 3 {
		t.Fatalf("accepted %+v", acc)
	}
	testsuite.WaitForPool(t, s, key, 60*time.Second, "three nodes", func(st contract.PoolStatus) bool { return st.Nodes == 3 })
}

// twoNodesOfDemand is more CPU (20 × 900m) than the largest plain sim size
// allocates (15.8 CPUs), so the pool needs at least two nodes however its
// first decisions are timed against the pods going pending.
func twoNodesOfDemand() starter.DemoDemand {
	return starter.DemoDemand{Shape: "steady", Pods: 20, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}
}

func demand(pods int) sim.DemandProfile {
	return sim.DemandProfile{Shape: sim.ShapeSteady, Pods: pods, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}
}

func hasAction(st contract.PoolStatus, action string) bool {
	for _, d := range st.Decisions {
		if d.Action == action {
			return true
		}
	}
	return false
}
