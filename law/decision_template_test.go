package law

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// acrossSizesInput is consolidationInput with n1 and n2 replaced by nodes
// of a larger size, each with room for one of n3's 1-CPU pods: only
// the AcrossSizes rule may move n3's pods there.
func acrossSizesInput() DecisionInput {
	in := consolidationInput(t0)
	for i := range 2 {
		n := &in.Observation.Nodes[i]
		n.Size = "sim-8c16g"
		n.Allocatable = types.Resources{MilliCPU: 8000, Memory: 20 * types.GiB, Pods: 110}
		n.Requested = types.Resources{MilliCPU: 7000, Memory: 16 * types.GiB, Pods: 7}
	}
	in.Rules.AcrossSizes = true
	return in
}

func TestConsolidationAcrossSizesMovesPodsOntoLargerNodes(t *testing.T) {
	d := Decide(acrossSizesInput())
	if d.Action != ActionScaleDown || len(d.RemoveNodes) != 1 || d.RemoveNodes[0] != "n3" {
		t.Fatalf("got %s %v (%s; skipped %v), want n3 consolidated onto the larger nodes", d.Action, d.RemoveNodes, d.Reason, d.Skipped)
	}
	// The same labels and taints on both sides still admit the pods.
	in := acrossSizesInput()
	for i := range in.Observation.Nodes {
		n := &in.Observation.Nodes[i]
		n.Labels = map[string]string{"topology.kubernetes.io/zone": "z1", "node.kubernetes.io/instance-type": n.Size}
		n.Taints = []types.Taint{{Key: "dedicated", Value: "web", Effect: "NoSchedule"}}
	}
	if d := Decide(in); d.Action != ActionScaleDown {
		t.Fatalf("same template but the instance type: got %s (%v), want n3 consolidated", d.Action, d.Skipped)
	}
}

func TestConsolidationAcrossSizesHoldsBack(t *testing.T) {
	cases := []struct {
		name   string
		change func(*DecisionInput)
	}{
		{"without the AcrossSizes rule", func(in *DecisionInput) { in.Rules.AcrossSizes = false }},
		{"the other nodes are smaller", func(in *DecisionInput) {
			for i := range 2 {
				in.Observation.Nodes[i].Allocatable.MilliCPU = 3500
				in.Observation.Nodes[i].Requested.MilliCPU = 2500
			}
		}},
		{"another zone", func(in *DecisionInput) {
			in.Observation.Nodes[2].Labels = map[string]string{"topology.kubernetes.io/zone": "z1"}
			for i := range 2 {
				in.Observation.Nodes[i].Labels = map[string]string{"topology.kubernetes.io/zone": "z2"}
			}
		}},
		{"a taint the pods may not tolerate", func(in *DecisionInput) {
			for i := range 2 {
				in.Observation.Nodes[i].Taints = []types.Taint{{Key: "dedicated", Value: "batch", Effect: "NoSchedule"}}
			}
		}},
		{"GPU nodes", func(in *DecisionInput) {
			for i := range 2 {
				in.Observation.Nodes[i].Allocatable.GPUs = 1
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := acrossSizesInput()
			tc.change(&in)
			d := Decide(in)
			if d.Action == ActionScaleDown {
				t.Fatalf("removed %v (%s)", d.RemoveNodes, d.Reason)
			}
			if said := strings.Join(d.Skipped, "; "); !strings.Contains(said, "do not surely fit") {
				t.Errorf("skipped %q, want it to say the pods do not surely fit", said)
			}
		})
	}
}

func TestSameTemplate(t *testing.T) {
	small := types.NodeObservation{Size: "s", Labels: map[string]string{"a": "1", "kubernetes.io/hostname": "x"}}
	big := types.NodeObservation{Size: "b", Labels: map[string]string{"a": "1", "extra": "y", "kubernetes.io/hostname": "z"}}
	if !sameTemplate(small, big, false) {
		t.Error("a node with every label of the other (but hostname) should admit its pods")
	}
	if sameTemplate(big, small, false) {
		t.Error("a node missing label extra should not admit pods that may select it")
	}
	gpuPods := small
	gpuPods.Requested.GPUs = 1
	if sameTemplate(gpuPods, big, true) {
		t.Error("GPU pods stay on their size")
	}
	// Two kwok nodes of one template differ in their machine and group
	// labels: only with the rule are those passed over; the zone is not.
	kwokNode := func(size, group, machine, zone string) types.NodeObservation {
		return types.NodeObservation{Size: size, Labels: map[string]string{"a": "1", "kubernetes.io/hostname": machine,
			"kwok.visor.hanzo.ai/group": group, "kwok.visor.hanzo.ai/machine": machine, "topology.kubernetes.io/zone": zone}}
	}
	oldNode, newNode := kwokNode("b", "g1", "g1-0", "kwok-a"), kwokNode("s", "g2", "g2-0", "kwok-a")
	if sameTemplate(oldNode, newNode, false) {
		t.Error("without the rule the machine labels tell the nodes apart")
	}
	if !sameTemplate(oldNode, newNode, true) {
		t.Error("with the rule two nodes differing only in machine labels are of one template")
	}
	if sameTemplate(oldNode, kwokNode("s", "g2", "g2-0", "kwok-b"), true) {
		t.Error("a node in another zone admits pods pinned to this one")
	}
}
