package replay

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

// TestRecordDrift records a pool whose node template changes (the change
// ID "lifecycle"): the old group drifted, each node replaced by one of a
// new group of the new template, bought first and drained once it holds
// the pods.
func TestRecordDrift(t *testing.T) { recordDrift(t, "drift", nil) }

// TestRecordDriftBatch records the same under maxDrainingNodes 2: the
// drifted nodes renewed two at a time.
func TestRecordDriftBatch(t *testing.T) {
	recordDrift(t, "drift-batch", &types.DisruptionBudget{MaxDrainingNodes: 2})
}

func recordDrift(t *testing.T, name string, budget *types.DisruptionBudget) {
	if os.Getenv("VISOR_RECORD_HISTORIES") != "1" {
		t.Skip("set VISOR_RECORD_HISTORIES=1 (make replay-record) to re-record the fixtures")
	}
	key := types.PoolKey{Org: "acme", Project: "shop", Service: name, Provider: "sim", Cluster: "sim-" + name}
	policy := testsuite.FastPolicy()
	policy.AllowedSizes = []string{"sim-2c4g"}
	policy.Disruption = budget
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-" + name, Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
		Pools: []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: policy},
			Demo: &starter.DemoDemand{Shape: "steady", Pods: 3, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}}},
	}
	s := testsuite.StartStack(t, spec, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	testsuite.WaitForPool(t, s, key, 150*time.Second, "scaled up", func(st contract.PoolStatus) bool {
		return st.PendingPods == 0 && st.Nodes >= 2
	})
	changed := policy
	changed.NodeLabels = map[string]string{"team": "checkout"}
	_, err := starter.SetPoolPolicy(ctx, s.Client, key, changed)
	must(t, err)
	testsuite.WaitForPool(t, s, key, 30*time.Second, "drift seen", func(st contract.PoolStatus) bool { return st.Drifted > 0 })
	// What `visor pool describe` shows at each step, logged as it changes
	// (docs/capacity-policies.md quotes it).
	shown := ""
	st := testsuite.WaitForPool(t, s, key, 180*time.Second, "drift rolled through", func(st contract.PoolStatus) bool {
		if v := describeLifecycle(st); v != shown {
			shown = v
			t.Logf("status:\n%s", v)
		}
		return st.Drifted == 0 && st.PendingPods == 0 && st.Nodes >= 2
	})
	var log []string
	for _, d := range st.Decisions {
		log = append(log, d.Action+": "+d.Reason+" -> "+d.Outcome)
	}
	if !strings.Contains(strings.Join(log, "\n"), "disrupt: lifecycle") {
		t.Fatalf("no lifecycle decision recorded:\n%s", strings.Join(log, "\n"))
	}
	t.Logf("decisions:\n%s", strings.Join(log, "\n"))
	_, err = starter.DeregisterPool(ctx, s.Client, key, contract.DeregisterRequest{Reason: "record"})
	must(t, err)
	must(t, s.Client.GetWorkflow(ctx, key.WorkflowID(), "").Get(ctx, nil))
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	write(t, ctx, s.Client, pc, key.WorkflowID(), "pool-"+name+"-"+fixtureTag()+".json")
}

// describeLifecycle is the part of `visor pool describe` a drift moves.
func describeLifecycle(st contract.PoolStatus) string {
	lines := []string{fmt.Sprintf("Nodes:        %d observed, target %d (floor %d, ceiling %d)", st.Nodes, st.TargetNodes, st.Policy.MinNodes, st.Policy.MaxNodes)}
	for _, b := range st.Blocked {
		lines = append(lines, "Blocked:      "+b)
	}
	if st.Drifted > 0 || st.Expired > 0 {
		lines = append(lines, fmt.Sprintf("Lifecycle:    %d drifted, %d expired (replaced within the disruption budget)", st.Drifted, st.Expired))
		for _, d := range st.Due {
			lines = append(lines, "Due:          "+d)
		}
	}
	if n := len(st.Decisions); n > 0 {
		d := st.Decisions[n-1]
		lines = append(lines, fmt.Sprintf("  #%d  %s  %s → %s", d.Seq, d.Action, d.Reason, d.Outcome))
	}
	return strings.Join(lines, "\n")
}
