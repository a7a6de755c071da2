package law

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// idlePackInput: n1 is a 32-CPU node without GPUs, idle for 15 minutes
// with three 8-CPU pods (24 of 128 CPUs, under the 30 % idle threshold);
// n2 and n3 are busy 32-CPU nodes with 7.7 CPUs free each (15.4
// together); g1 is a GPU node with 100 CPUs free. By sums the three pods
// (24 CPUs) fit the others' free room (115.4 CPUs) and the largest fits
// g1, yet no node the pods may run on holds even one of them: this is
// the alibaba-1d case that stranded three pods.
func idlePackInput(now time.Time) DecisionInput {
	pod := types.Resources{MilliCPU: 8000, Memory: 30 * types.GiB, Pods: 1}
	cpuNode := func(name string, usedCPU int64) types.NodeObservation {
		return types.NodeObservation{
			Name: name, State: types.NodeReady, Size: "m6i.32xlarge",
			Allocatable: types.Resources{MilliCPU: 128000, Memory: 512 * types.GiB, Pods: 234},
			Requested:   types.Resources{MilliCPU: usedCPU, Memory: 200 * types.GiB, Pods: 3},
			LargestPod:  pod,
		}
	}
	n1 := cpuNode("n1", 24000)
	n1.Requested.Memory = 90 * types.GiB
	n2, n3 := cpuNode("n2", 120300), cpuNode("n3", 120300)
	g1 := types.NodeObservation{
		Name: "g1", State: types.NodeReady, Size: "g5.48xlarge",
		Allocatable: types.Resources{MilliCPU: 191000, Memory: 760 * types.GiB, GPUs: 8, Pods: 345},
		Requested:   types.Resources{MilliCPU: 91000, Memory: 300 * types.GiB, GPUs: 8, Pods: 8},
		LargestPod:  types.Resources{MilliCPU: 12000, Memory: 40 * types.GiB, GPUs: 1, Pods: 1},
	}
	nodes := []types.NodeObservation{n1, n2, n3, g1}
	in := input(obs(now, nodes), now)
	in.Policy.MinNodes = 1
	in.IdleSince = UpdateIdleSince(in.Policy, nil, types.PoolObservation{ObservedAt: now.Add(-15 * time.Minute), Nodes: nodes})
	return in
}

func TestIdleRulePacksThePodsOntoNodesThatAdmitThem(t *testing.T) {
	if _, ok := idlePackInput(t0).IdleSince["n1"]; !ok {
		t.Fatal("fixture: n1 is not idle")
	}
	cases := []struct {
		name    string
		change  func(*DecisionInput)
		removed []string
		skipped string // in Skipped when nothing is removed
	}{
		{"by sums the pods fit: the old rule strands them", func(in *DecisionInput) { in.Rules.PackIdle = false }, []string{"n1"}, ""},
		{"no node without GPUs holds an 8-CPU pod", nil, nil, "n1: not removed, its 3 pods do not surely fit"},
		{"two slots on n2 and one on n3 hold the three", func(in *DecisionInput) {
			in.Observation.Nodes[1].Requested.MilliCPU = 112000
			in.Observation.Nodes[2].Requested.MilliCPU = 120000
		}, []string{"n1"}, ""},
		{"two slots on n2 and a sliver on n3 do not", func(in *DecisionInput) {
			in.Observation.Nodes[1].Requested.MilliCPU = 112000
		}, nil, "do not surely fit"},
		{"pod slots count", func(in *DecisionInput) {
			for i := 1; i <= 2; i++ {
				in.Observation.Nodes[i].Requested.MilliCPU = 100000
				in.Observation.Nodes[i].Requested.Pods = 233 // one slot left each
			}
		}, nil, "do not surely fit"},
		{"a taint the idle node lacks keeps its pods off", func(in *DecisionInput) {
			for i := 1; i <= 2; i++ {
				in.Observation.Nodes[i].Requested.MilliCPU = 100000
				in.Observation.Nodes[i].Taints = []types.Taint{{Key: "dedicated", Value: "batch", Effect: "NoSchedule"}}
			}
		}, nil, "do not surely fit"},
		{"another zone admits them (pools spread over zones)", func(in *DecisionInput) {
			zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
			for i := 0; i <= 2; i++ {
				in.Observation.Nodes[i].Labels = map[string]string{"topology.kubernetes.io/zone": zones[i], "team": "web"}
			}
			in.Observation.Nodes[1].Requested.MilliCPU = 100000
			in.Observation.Nodes[2].Requested.MilliCPU = 100000
		}, []string{"n1"}, ""},
		{"another label still keeps them off", func(in *DecisionInput) {
			in.Observation.Nodes[0].Labels = map[string]string{"team": "web"}
			for i := 1; i <= 2; i++ {
				in.Observation.Nodes[i].Labels = map[string]string{"team": "batch"}
				in.Observation.Nodes[i].Requested.MilliCPU = 100000
			}
		}, nil, "do not surely fit"},
		{"each pod taken as large as the largest", func(in *DecisionInput) {
			// 24 CPUs free on n2 alone hold the sum but only two 12-CPU slots.
			in.Observation.Nodes[0].LargestPod.MilliCPU = 12000
			in.Observation.Nodes[1].Requested.MilliCPU = 104000
		}, nil, "do not surely fit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := idlePackInput(t0)
			in.Rules.PackIdle = true
			if tc.change != nil {
				tc.change(&in)
			}
			d := Decide(in)
			if !slices.Equal(d.RemoveNodes, tc.removed) {
				t.Fatalf("removed %v, want %v (%s; skipped %v; blocked %v)", d.RemoveNodes, tc.removed, d.Reason, d.Skipped, d.Blocked)
			}
			if tc.removed == nil && !strings.Contains(strings.Join(d.Skipped, "; "), tc.skipped) {
				t.Fatalf("skipped %v, want %q", d.Skipped, tc.skipped)
			}
		})
	}
}

func TestIdleRuleGivesNoNodeBothWays(t *testing.T) {
	// n1 and n2 are idle 4-CPU nodes with a 1-CPU pod each; n3 has room
	// for one more such pod. n1's pod may go onto n2, or n2's onto n3,
	// not both in one decision: by sums n2 counted as room for n1 and
	// then went too, leaving two pods for n3's one slot.
	pod := types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}
	nodes := []types.NodeObservation{withPods(node("n1", 0.25, 0.1), 1, pod), withPods(node("n2", 0.25, 0.1), 1, pod), node("n3", 0.7, 0.7)}
	in := input(obs(t0, nodes), t0)
	in.Policy.MinNodes = 1
	in.IdleSince = UpdateIdleSince(in.Policy, nil, types.PoolObservation{ObservedAt: t0.Add(-15 * time.Minute), Nodes: nodes})
	in.Rules.PackIdle = true
	if d := Decide(in); !slices.Equal(d.RemoveNodes, []string{"n1"}) {
		t.Fatalf("removed %v, want only n1 (n2 takes its pod)", d.RemoveNodes)
	}
	in.Rules.PackIdle = false
	if d := Decide(in); len(d.RemoveNodes) != 2 {
		t.Fatalf("the old rule removed %v; the fixture expects it to remove both", d.RemoveNodes)
	}
}

func TestIdleRuleStillRemovesAnEmptyNodeAndOneWithUnknownPods(t *testing.T) {
	// Nodes reporting no pod count or largest pod (older observers) count
	// as one pod of everything they request.
	nodes := []types.NodeObservation{node("n1", 0, 0), node("n2", 0.2, 0.1), node("n3", 0.5, 0.5)}
	in := input(obs(t0, nodes), t0)
	in.Policy.MinNodes = 1
	in.IdleSince = UpdateIdleSince(in.Policy, nil, types.PoolObservation{ObservedAt: t0.Add(-15 * time.Minute), Nodes: nodes})
	in.Rules.PackIdle = true
	if d := Decide(in); !slices.Equal(d.RemoveNodes, []string{"n1", "n2"}) {
		t.Fatalf("removed %v (%v), want n1 and n2", d.RemoveNodes, d.Skipped)
	}
}
