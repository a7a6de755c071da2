package law

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// The consolidation disruption knob on the consolidation fixture (n3's
// two pods fit on n1 and n2) and the replacement fixture (n1 and n2 by
// one cheaper node).
func TestConsolidationDisruption(t *testing.T) {
	priced := func(in *DecisionInput) {
		in.SizePrice = map[string]float64{"sim-4c8g": 0.2, "sim-8c16g": 0.3}
	}
	cases := []struct {
		name   string
		input  func() DecisionInput
		mode   string
		change func(*DecisionInput)
		want   Action
		said   string
	}{
		{"always consolidates", func() DecisionInput { return consolidationInput(t0) }, types.DisruptAlways, priced, ActionScaleDown, ""},
		{"idle-only keeps a node running pods", func() DecisionInput { return consolidationInput(t0) }, types.DisruptIdleOnly, priced, ActionNone, ""},
		{"balanced: a third of the cost for a quarter of the pods", func() DecisionInput { return consolidationInput(t0) }, types.DisruptBalanced, priced, ActionScaleDown, ""},
		{"balanced: the pods weigh more than the saving", func() DecisionInput { return consolidationInput(t0) }, types.DisruptBalanced, func(in *DecisionInput) {
			priced(in)
			in.Observation.Nodes[2].DisruptionCost = 20 // high-priority pods
		}, ActionNone, "balanced policy"},
		{"balanced: no prices, nothing disrupted", func() DecisionInput { return consolidationInput(t0) }, types.DisruptBalanced, func(in *DecisionInput) {}, ActionNone, "no prices"},
		{"always replaces", replaceInputNow, types.DisruptAlways, func(*DecisionInput) {}, ActionReplace, ""},
		{"idle-only never replaces", replaceInputNow, types.DisruptIdleOnly, func(*DecisionInput) {}, ActionNone, ""},
		{"balanced: $0.10 of $0.60 for 2 of 5 pods is not worth it", replaceInputNow, types.DisruptBalanced, func(*DecisionInput) {}, ActionNone, "not worth it under the balanced policy"},
		{"balanced: the same for 2 of 20 pods is", replaceInputNow, types.DisruptBalanced, func(in *DecisionInput) { in.Observation.Nodes[2].Requested.Pods = 18 }, ActionReplace, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input()
			in.Policy.ConsolidationDisruption = tc.mode
			tc.change(&in)
			d := Decide(in)
			if d.Action != tc.want {
				t.Fatalf("got %s (%s; %v), want %s", d.Action, d.Reason, d.Skipped, tc.want)
			}
			if said := strings.Join(d.Skipped, "; "); tc.said != "" && !strings.Contains(said, tc.said) {
				t.Errorf("skipped %q, want it to say %q", said, tc.said)
			}
		})
	}
}

func replaceInputNow() DecisionInput { return replaceInput(t0) }

// An empty node still goes under idle-only.
func TestIdleOnlyStillRemovesEmptyNodes(t *testing.T) {
	in := consolidationInput(t0)
	in.Policy.ConsolidationDisruption = types.DisruptIdleOnly
	in.Observation.Nodes = append(in.Observation.Nodes, types.NodeObservation{Name: "n4", Size: "sim-4c8g", State: types.NodeReady,
		Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110}, Requested: types.Resources{}})
	in.UnderusedSince["n4"] = t0.Add(-10 * time.Minute)
	in.IdleSince["n4"] = t0.Add(-10 * time.Minute)
	d := Decide(in)
	if d.Action != ActionScaleDown || strings.Join(d.RemoveNodes, ",") != "n4" {
		t.Fatalf("got %s %v (%s), want only the empty n4 removed", d.Action, d.RemoveNodes, d.Reason)
	}
}
