package law

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// replaceInput: n1 and n2, 4-core nodes at $0.20/h, each hold one pod of
// 2.4 cores that fits nowhere else (n3 is busy); an 8-core size at
// $0.30/h holds both, so the law replaces the two by one.
func replaceInput(now time.Time) DecisionInput {
	pod := types.Resources{MilliCPU: 2400, Memory: 4 * types.GiB, Pods: 1}
	nodes := []types.NodeObservation{
		withPods(node("n1", 0.6, 0.4), 1, pod),
		withPods(node("n2", 0.6, 0.4), 1, pod),
		withPods(node("n3", 0.9, 0.9), 3, types.Resources{MilliCPU: 1200, Memory: 3 * types.GiB, Pods: 1}),
	}
	in := input(obs(now, nodes), now)
	in.Policy.MinNodes = 1
	recordedZeros(&in.Policy)
	in.Rules = AllRules()
	in.UnderusedSince = UpdateUnderusedSince(in.Policy, nil, types.PoolObservation{ObservedAt: now.Add(-6 * time.Minute), Nodes: nodes})
	in.SizeRoom = map[string]types.Resources{
		"sim-2c4g":  {MilliCPU: 2000, Memory: 4 * types.GiB, Pods: 110},
		"sim-4c8g":  {MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
		"sim-8c16g": {MilliCPU: 8000, Memory: 20 * types.GiB, Pods: 110},
	}
	in.SizePrice = map[string]float64{"sim-2c4g": 0.10, "sim-4c8g": 0.20, "sim-8c16g": 0.30}
	return in
}

func TestReplaceBuysOneCheaperNodeForUnderusedOnes(t *testing.T) {
	d := Decide(replaceInput(t0))
	if d.Action != ActionReplace || d.Replacing == nil {
		t.Fatalf("got %s (%s; %v), want a replacement", d.Action, d.Reason, d.Skipped)
	}
	r := d.Replacing
	if strings.Join(r.Old, ",") != "n1,n2" || r.Size != "sim-8c16g" || !r.Since.Equal(t0) {
		t.Fatalf("replacement %+v, want n1,n2 by one sim-8c16g since now", r)
	}
	if r.Saves < 0.099 || r.Saves > 0.101 {
		t.Errorf("saves $%.3f/h, want $0.100", r.Saves)
	}
	if len(d.RemoveNodes) != 0 {
		t.Errorf("removes %v before the new node is Ready", d.RemoveNodes)
	}
}

func TestReplaceHoldsBack(t *testing.T) {
	cases := map[string]func(*DecisionInput){
		"without the rule":         func(in *DecisionInput) { in.Rules.Replace = false },
		"not cheaper":              func(in *DecisionInput) { in.SizePrice["sim-8c16g"] = 0.40 },
		"no prices yet":            func(in *DecisionInput) { in.SizePrice = nil },
		"a drain blocker":          func(in *DecisionInput) { in.Observation.Nodes[0].DrainBlockers = []string{"do-not-disrupt"} },
		"at the floor":             func(in *DecisionInput) { in.Policy.MinNodes = 3 },
		"at the ceiling":           func(in *DecisionInput) { in.Policy.MaxNodes = 3 },
		"a node still booting":     func(in *DecisionInput) { in.Observation.Nodes[2].State = types.NodeProvisioning },
		"underused too briefly":    func(in *DecisionInput) { in.UnderusedSince["n2"] = t0.Add(-time.Minute) },
		"pods pending":             func(in *DecisionInput) { in.Observation.PendingPods = []types.PendingPod{pending("p", t0)} },
		"the budget drains one":    func(in *DecisionInput) { in.Policy.MaxScaleDownPerDecision = 1 },
		"pods too large for sizes": func(in *DecisionInput) { delete(in.SizeRoom, "sim-8c16g") },
		"one under way": func(in *DecisionInput) {
			in.Replacing = &Replacement{Old: []string{"n3"}, Size: "sim-8c16g", Since: t0.Add(-time.Minute)}
		},
		"GPU nodes": func(in *DecisionInput) {
			for i := range in.Observation.Nodes[:2] {
				in.Observation.Nodes[i].Allocatable.GPUs = 1
			}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			in := replaceInput(t0)
			change(&in)
			if d := Decide(in); d.Action == ActionReplace {
				t.Fatalf("replaced %+v (%s)", d.Replacing, d.Reason)
			}
		})
	}
}

// drainInput: the replacement of n1 and n2 under way, its new node n4
// (sim-8c16g) Ready and empty.
func drainInput(now time.Time) DecisionInput {
	in := replaceInput(now)
	in.Replacing = &Replacement{Old: []string{"n1", "n2"}, Size: "sim-8c16g", Since: now.Add(-2 * time.Minute), Saves: 0.1}
	in.Observation.Nodes = append(in.Observation.Nodes, types.NodeObservation{Name: "n4", Size: "sim-8c16g", State: types.NodeReady,
		CreatedAt: now.Add(-90 * time.Second), Allocatable: in.SizeRoom["sim-8c16g"]})
	return in
}

func TestReplaceDrainsTheOldNodesOnceTheNewOneIsReady(t *testing.T) {
	d := Decide(drainInput(t0))
	if d.Action != ActionScaleDown || strings.Join(d.RemoveNodes, ",") != "n1,n2" || !strings.Contains(d.Reason, "replacement") {
		t.Fatalf("got %s %v (%s; %v %v), want n1,n2 drained", d.Action, d.RemoveNodes, d.Reason, d.Blocked, d.Skipped)
	}
}

func TestReplaceWaitsOrLapses(t *testing.T) {
	cases := []struct {
		name   string
		change func(*DecisionInput)
		want   string // in Blocked or Skipped
	}{
		{"new node booting", func(in *DecisionInput) { in.Observation.Nodes[3].State = types.NodeProvisioning }, "waiting for the new sim-8c16g"},
		{"new node older than the replacement", func(in *DecisionInput) { in.Observation.Nodes[3].CreatedAt = t0.Add(-time.Hour) }, "waiting for the new"},
		{"its room taken meanwhile", func(in *DecisionInput) {
			in.Observation.Nodes[3].Requested = types.Resources{MilliCPU: 5000, Memory: 4 * types.GiB, Pods: 3}
		}, "no longer fit"},
		{"an old node got a do-not-disrupt pod", func(in *DecisionInput) { in.Observation.Nodes[1].DrainBlockers = []string{"do-not-disrupt"} }, "not replaced"},
		{"the floor", func(in *DecisionInput) { in.Policy.MinNodes = 3 }, "floor or the disruption budget"},
		{"the disruption budget", func(in *DecisionInput) {
			in.Observation.Nodes[2].State = types.NodeCordoned
			in.Policy.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 2}
		}, "floor or the disruption budget"},
		{"lapsed after the provision timeout", func(in *DecisionInput) { in.Replacing.Since = t0.Add(-time.Hour) }, ""},
		{"pods pending", func(in *DecisionInput) { in.Observation.PendingPods = []types.PendingPod{pending("p", t0)} }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := drainInput(t0)
			tc.change(&in)
			d := Decide(in)
			// Consolidation may still move a pod onto n4 where it surely
			// fits; the replacement's own drain of both must not happen.
			if d.Action == ActionScaleDown && strings.HasPrefix(d.Reason, "replacement") {
				t.Fatalf("drained %v (%s)", d.RemoveNodes, d.Reason)
			}
			said := strings.Join(append(d.Blocked, d.Skipped...), "; ")
			if tc.want != "" && !strings.Contains(said, tc.want) {
				t.Errorf("blocked/skipped %q, want it to say %q", said, tc.want)
			}
		})
	}
	if ReplacementLive(types.DefaultPolicy(), drainInput(t0).Replacing, drainInput(t0).Observation, t0.Add(time.Hour)) {
		t.Error("a replacement is live past the provision timeout")
	}
	gone := drainInput(t0)
	gone.Observation.Nodes = gone.Observation.Nodes[1:]
	if ReplacementLive(gone.Policy, gone.Replacing, gone.Observation, t0) {
		t.Error("a replacement is live with an old node gone")
	}
}
