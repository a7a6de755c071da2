package replay

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

// TestRecordInterruption records a pool whose spot node is interrupted
// (the change ID "interruptions"): notices read on the pool's own timer,
// the replacement bought, the node drained and deleted, the notice
// acknowledged.
func TestRecordInterruption(t *testing.T) {
	if os.Getenv("VISOR_RECORD_HISTORIES") != "1" {
		t.Skip("set VISOR_RECORD_HISTORIES=1 (make replay-record) to re-record the fixtures")
	}
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "spot", Provider: "sim", Cluster: "sim-spot"}
	policy := testsuite.FastPolicy()
	policy.AllowedSizes = []string{"sim-2c4g"}
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-spot", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
		Pools: []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: policy},
			Demo: &starter.DemoDemand{Shape: "steady", Pods: 6, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}}},
	}
	s := testsuite.StartStack(t, spec, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	testsuite.WaitForPool(t, s, key, 150*time.Second, "scaled up", func(st contract.PoolStatus) bool {
		return st.PendingPods == 0 && st.Nodes >= 2
	})
	testsuite.InterruptSpotNode(t, s, key)
	testsuite.WaitForPool(t, s, key, 60*time.Second, "pods placed again", func(st contract.PoolStatus) bool { return st.PendingPods == 0 })
	_, err := starter.DeregisterPool(ctx, s.Client, key, contract.DeregisterRequest{Reason: "record"})
	must(t, err)
	must(t, s.Client.GetWorkflow(ctx, key.WorkflowID(), "").Get(ctx, nil))
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	write(t, ctx, s.Client, pc, key.WorkflowID(), "pool-interruption-"+fixtureTag()+".json")
}
