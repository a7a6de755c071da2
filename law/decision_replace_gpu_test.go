package law

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// fullGPUNode is a Ready 1-GPU node of size g-1 ($1.00/h), an hour old,
// whose GPU is in use by one pod of 6 cores: full on its device, so no
// underused clock ever runs for it.
func fullGPUNode(name string, now time.Time) types.NodeObservation {
	pod := types.Resources{MilliCPU: 6000, Memory: 20 * types.GiB, GPUs: 1, Pods: 1}
	return types.NodeObservation{Name: name, Size: "g-1", State: types.NodeReady, CreatedAt: now.Add(-time.Hour),
		Allocatable: types.Resources{MilliCPU: 15000, Memory: 60 * types.GiB, GPUs: 1, Pods: 110},
		Requested:   pod, LargestPod: pod}
}

// replaceGPUInput: four full g-1 nodes ($4.00/h together) and a busy CPU
// node; g-4 (4 GPUs of the same model, $3.00/h) holds all four pods, g-8
// ($7.00/h) is dearer than they are, h-4 is another model.
func replaceGPUInput(now time.Time) DecisionInput {
	nodes := []types.NodeObservation{fullGPUNode("g1", now), fullGPUNode("g2", now), fullGPUNode("g3", now), fullGPUNode("g4", now), node("c1", 0.9, 0.9)}
	in := input(obs(now, nodes), now)
	in.Policy.MinNodes = 1
	in.Rules = AllRules()
	in.SizeRoom = map[string]types.Resources{
		"sim-4c8g": {MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
		"g-1":      {MilliCPU: 15000, Memory: 60 * types.GiB, GPUs: 1, Pods: 110},
		"g-4":      {MilliCPU: 30000, Memory: 180 * types.GiB, GPUs: 4, Pods: 110},
		"g-8":      {MilliCPU: 190000, Memory: 700 * types.GiB, GPUs: 8, Pods: 110},
		"h-4":      {MilliCPU: 46000, Memory: 180 * types.GiB, GPUs: 4, Pods: 110},
	}
	in.SizePrice = map[string]float64{"sim-4c8g": 0.2, "g-1": 1, "g-4": 3, "g-8": 7, "h-4": 2}
	in.SizeGPUModel = map[string]string{"g-1": "A10G", "g-4": "A10G", "g-8": "A10G", "h-4": "T4"}
	return in
}

func TestReplaceGPUBuysOneLargerNodeCheaperPerDevice(t *testing.T) {
	d := Decide(replaceGPUInput(t0))
	if d.Action != ActionReplace || d.Replacing == nil {
		t.Fatalf("got %s (%s; %v %v), want a GPU replacement", d.Action, d.Reason, d.Blocked, d.Skipped)
	}
	if r := d.Replacing; strings.Join(r.Old, ",") != "g1,g2,g3,g4" || r.Size != "g-4" || r.Saves < 0.999 || r.Saves > 1.001 {
		t.Fatalf("replacement %+v, want g1..g4 by one g-4 saving $1/h", r)
	}
	if !strings.Contains(d.Reason, "same GPU model") {
		t.Errorf("reason %q does not say the model is kept", d.Reason)
	}
}

// Only nodes whose pods the size holds join: a node with a larger pod
// is skipped, not the end of the set.
func TestReplaceGPUSkipsANodeThatDoesNotFit(t *testing.T) {
	in := replaceGPUInput(t0)
	big := types.Resources{MilliCPU: 14000, Memory: 20 * types.GiB, GPUs: 1, Pods: 1}
	in.Observation.Nodes[1].Requested, in.Observation.Nodes[1].LargestPod = big, big
	in.Observation.Nodes = append(in.Observation.Nodes, fullGPUNode("g5", t0))
	d := Decide(in)
	if d.Action != ActionReplace || strings.Join(d.Replacing.Old, ",") != "g1,g3,g4,g5" {
		t.Fatalf("got %s %+v (%s), want g1,g3,g4,g5 replaced", d.Action, d.Replacing, d.Reason)
	}
}

func TestReplaceGPUHoldsBack(t *testing.T) {
	cases := map[string]func(*DecisionInput){
		"without the rule":   func(in *DecisionInput) { in.Rules.ReplaceGPU = false },
		"without Replace":    func(in *DecisionInput) { in.Rules.Replace = false },
		"models unknown":     func(in *DecisionInput) { in.SizeGPUModel = nil },
		"only another model": func(in *DecisionInput) { in.SizeGPUModel["g-4"], in.SizeGPUModel["g-8"] = "T4", "T4" },
		"not cheaper":        func(in *DecisionInput) { in.SizePrice["g-4"] = 4 },
		"too young": func(in *DecisionInput) {
			setAll(in, func(n *types.NodeObservation) { n.CreatedAt = t0.Add(-time.Minute) })
		},
		"do-not-disrupt pods": func(in *DecisionInput) {
			setAll(in, func(n *types.NodeObservation) { n.DrainBlockers = []string{"do-not-disrupt"} })
		},
		"pods pending":   func(in *DecisionInput) { in.Observation.PendingPods = []types.PendingPod{pending("p", t0)} },
		"a node booting": func(in *DecisionInput) { in.Observation.Nodes[4].State = types.NodeProvisioning },
		"at the ceiling": func(in *DecisionInput) { in.Policy.MaxNodes = 5 },
		"at the floor":   func(in *DecisionInput) { in.Policy.MinNodes = 5 },
		"one under way": func(in *DecisionInput) {
			in.Replacing = &Replacement{Old: []string{"c1"}, Size: "sim-4c8g", Since: t0.Add(-time.Minute)}
		},
		"labels differ": func(in *DecisionInput) {
			for i := range in.Observation.Nodes[:4] {
				in.Observation.Nodes[i].Labels = map[string]string{"zone": string(rune('a' + i))}
			}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			in := replaceGPUInput(t0)
			change(&in)
			if d := Decide(in); d.Action == ActionReplace {
				t.Fatalf("replaced %+v (%s)", d.Replacing, d.Reason)
			}
		})
	}
}

func setAll(in *DecisionInput, f func(*types.NodeObservation)) {
	for i := range in.Observation.Nodes {
		f(&in.Observation.Nodes[i])
	}
}

// The drain half: the new g-4 Ready and empty drains the four; a new
// node of another model never does.
func TestReplaceGPUDrainsOnlyOntoTheSameModel(t *testing.T) {
	in := replaceGPUInput(t0)
	in.Replacing = &Replacement{Old: []string{"g1", "g2", "g3", "g4"}, Size: "g-4", Since: t0.Add(-2 * time.Minute), Saves: 1}
	in.Observation.Nodes = append(in.Observation.Nodes, types.NodeObservation{Name: "new", Size: "g-4", State: types.NodeReady,
		CreatedAt: t0.Add(-time.Minute), Allocatable: in.SizeRoom["g-4"]})
	in.Policy.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 4}
	d := Decide(in)
	if d.Action != ActionScaleDown || strings.Join(d.RemoveNodes, ",") != "g1,g2,g3,g4" {
		t.Fatalf("got %s %v (%s; %v %v), want g1..g4 drained", d.Action, d.RemoveNodes, d.Reason, d.Blocked, d.Skipped)
	}
	in.SizeGPUModel["g-4"] = "T4"
	if d := Decide(in); d.Action == ActionScaleDown && strings.HasPrefix(d.Reason, "replacement") {
		t.Fatalf("drained onto another GPU model: %s", d.Reason)
	}
	in.SizeGPUModel["g-4"] = "A10G"
	in.Rules.ReplaceGPU = false
	if d := Decide(in); d.Action == ActionScaleDown && strings.HasPrefix(d.Reason, "replacement") {
		t.Fatalf("drained GPU nodes without the rule: %s", d.Reason)
	}
}
