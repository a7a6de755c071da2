package law

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// withPods gives a node its pods' count and largest pod, as the observer does.
func withPods(n types.NodeObservation, count int64, largest types.Resources) types.NodeObservation {
	n.Requested.Pods, n.LargestPod = count, largest
	return n
}

// consolidationInput: n1 and n2 busy at 75 %, each with room for one
// 1-CPU pod; n3 at 50 % (above the idle thresholds, below the
// consolidation threshold) with two such pods, underused for 6 minutes.
func consolidationInput(now time.Time) DecisionInput {
	pod := types.Resources{MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1}
	nodes := []types.NodeObservation{
		withPods(node("n1", 0.75, 0.75), 3, pod),
		withPods(node("n2", 0.75, 0.75), 3, pod),
		withPods(node("n3", 0.5, 0.4), 2, pod),
	}
	in := input(obs(now, nodes), now)
	in.Rules.Consolidation = true
	recordedZeros(&in.Policy)
	in.UnderusedSince = UpdateUnderusedSince(in.Policy, nil, types.PoolObservation{ObservedAt: now.Add(-6 * time.Minute), Nodes: nodes})
	return in
}

func TestConsolidationRemovesAnUnderusedNodeWhosePodsFitElsewhere(t *testing.T) {
	d := Decide(consolidationInput(t0))
	if d.Action != ActionScaleDown || len(d.RemoveNodes) != 1 || d.RemoveNodes[0] != "n3" {
		t.Fatalf("got %s %v (%s), want n3 consolidated", d.Action, d.RemoveNodes, d.Reason)
	}
	if !strings.Contains(d.Reason, "consolidation") {
		t.Errorf("reason %q does not say consolidation", d.Reason)
	}
}

func TestConsolidationHoldsBack(t *testing.T) {
	cases := []struct {
		name   string
		change func(*DecisionInput)
		want   string // in Blocked or Skipped; "" for silence
	}{
		{"without the consolidation rules", func(in *DecisionInput) { in.Rules.Consolidation = false }, ""},
		{"turned off by policy", func(in *DecisionInput) { in.Policy.DisableConsolidation = true }, ""},
		{"drain blocker", func(in *DecisionInput) {
			in.Observation.Nodes[2].DrainBlockers = []string{"pod default/db: safe-to-evict false"}
		}, ""},
		{"pods would not fit", func(in *DecisionInput) {
			in.Observation.Nodes[1] = withPods(node("n2", 0.9, 0.9), 3, in.Observation.Nodes[1].LargestPod)
		}, "do not surely fit"},
		{"another size's room does not count", func(in *DecisionInput) { in.Observation.Nodes[1].Size = "sim-8c16g" }, "do not surely fit"},
		{"inside the cooldown after scale-down", func(in *DecisionInput) { in.LastScaleDown = t0.Add(-10 * time.Second) }, "cooldown until"},
		{"underused too briefly", func(in *DecisionInput) { in.UnderusedSince["n3"] = t0.Add(-time.Minute) }, ""},
		{"above the threshold", func(in *DecisionInput) { in.Policy.ConsolidationThreshold = 0.4 }, ""},
		{"at the floor", func(in *DecisionInput) { in.Policy.MinNodes = 3 }, ""},
		{"disruption window closed", func(in *DecisionInput) {
			in.Policy.Disruption = &types.DisruptionBudget{Windows: []types.DisruptionWindow{{Schedule: "0 2 * * *", TimeZone: "UTC",
				Duration: types.Duration(time.Hour), ScaleDown: types.ScaleDownAllowed}}}
		}, "scale-down not allowed now"},
		{"pods pending", func(in *DecisionInput) { in.Observation.PendingPods = []types.PendingPod{pending("p", t0)} }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := consolidationInput(t0)
			tc.change(&in)
			d := Decide(in)
			if d.Action == ActionScaleDown {
				t.Fatalf("removed %v (%s)", d.RemoveNodes, d.Reason)
			}
			said := strings.Join(append(d.Blocked, d.Skipped...), "; ")
			if tc.want != "" && !strings.Contains(said, tc.want) {
				t.Errorf("blocked/skipped %q, want it to say %q", said, tc.want)
			}
		})
	}
	t.Run("window end is a wake-up", func(t *testing.T) {
		in := consolidationInput(t0)
		in.UnderusedSince["n3"] = t0.Add(-time.Minute)
		if d := Decide(in); !d.WakeAt.Equal(t0.Add(4*time.Minute)) || !strings.Contains(d.WakeReason, "n3") {
			t.Errorf("wake %s (%s), want the end of n3's consolidation window", d.WakeAt, d.WakeReason)
		}
	})
}

// Two candidates share one node's room: the second must not count the
// room the first already took.
func TestConsolidationDoesNotSpendRoomTwice(t *testing.T) {
	pod := types.Resources{MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1}
	nodes := []types.NodeObservation{
		withPods(node("big", 0.5, 0.4), 2, pod), // room for 2 pods
		withPods(node("a", 0.25, 0.2), 1, pod),
		withPods(node("b", 0.25, 0.2), 1, pod),
		withPods(node("c", 0.25, 0.2), 1, pod),
	}
	in := input(obs(t0, nodes), t0)
	in.Policy.MinNodes, in.Policy.MaxScaleDownPerDecision = 1, 0
	in.Policy.IdleCPUThreshold, in.Policy.IdleMemoryThreshold = 0.1, 0.1 // nobody idle: consolidation only
	in.Rules.Consolidation = true
	in.UnderusedSince = UpdateUnderusedSince(in.Policy, nil, types.PoolObservation{ObservedAt: t0.Add(-time.Hour), Nodes: nodes})
	d := Decide(in)
	if d.Action != ActionScaleDown {
		t.Fatalf("got %s (%s)", d.Action, d.Reason)
	}
	// a, b and c each need one slot; "big" has two and receives, so it
	// stays; one of the three small ones must stay too.
	if len(d.RemoveNodes) != 2 {
		t.Fatalf("removed %v, want two of a, b, c", d.RemoveNodes)
	}
	for _, n := range d.RemoveNodes {
		if n == "big" {
			t.Errorf("removed %v: big received pods in the same decision", d.RemoveNodes)
		}
	}
}

func TestScaleUpCooldownHoldsBackOnlyCoveredPods(t *testing.T) {
	booting := func(free bool) types.NodeObservation {
		n := node("boot", 0, 0)
		n.State = types.NodeProvisioning
		if !free {
			n.Allocatable = types.Resources{MilliCPU: 100, Memory: types.GiB, Pods: 110}
		}
		return n
	}
	cases := []struct {
		name          string
		consolidation bool
		roomy         bool
		inFlight      int
		want          Action
	}{
		{"booting node has room: held back", true, true, 0, ActionNone},
		{"no booting room: scales up in the cooldown", true, false, 0, ActionScaleUp},
		{"machines not yet observed: held back", true, false, 1, ActionNone},
		{"old runs wait for the cooldown", false, false, 0, ActionNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(2 * time.Minute)
			in := input(obs(now, append(threeNodes(), booting(tc.roomy)), pending("p1", t0)), now)
			in.LastScaleUp = t0.Add(time.Minute)
			in.Rules.Consolidation, in.InFlightNodes = tc.consolidation, tc.inFlight
			in.Policy.MaxNodes = 10
			d := Decide(in)
			if d.Action != tc.want {
				t.Fatalf("action %s (%s, blocked %v), want %s", d.Action, d.Reason, d.Blocked, tc.want)
			}
		})
	}
}

func TestScaleUpNoLongerHoldsScaleDownBack(t *testing.T) {
	now := t0.Add(time.Hour)
	in := idleInput(now, 20*time.Minute)
	in.LastScaleUp = now.Add(-time.Minute)
	if d := Decide(in); d.Action == ActionScaleDown {
		t.Fatalf("old rules: removed %v a minute after a scale-up", d.RemoveNodes)
	}
	in.Rules.Consolidation = true
	if d := Decide(in); d.Action != ActionScaleDown {
		t.Fatalf("consolidation rules: %s (%s, blocked %v), want the idle node removed", d.Action, d.Reason, d.Blocked)
	}
}

// recordedZeros leaves consolidation's fields zero, as in a policy
// recorded before DefaultPolicy wrote them: the law's 70 % and 5m.
func recordedZeros(p *types.Policy) { p.ConsolidationThreshold, p.ConsolidateAfter = 0, 0 }

func TestUpdateUnderusedSince(t *testing.T) {
	p := types.DefaultPolicy()
	recordedZeros(&p)
	o := types.PoolObservation{ObservedAt: t0, Nodes: []types.NodeObservation{node("low", 0.5, 0.5), node("high", 0.8, 0.1)}}
	got := UpdateUnderusedSince(p, nil, o)
	if _, ok := got["high"]; ok || !got["low"].Equal(t0) {
		t.Fatalf("clocks %v, want only low since t0", got)
	}
	o.ObservedAt = t0.Add(time.Minute)
	o.Nodes[0] = node("low", 0.75, 0.5)
	if got = UpdateUnderusedSince(p, got, o); len(got) != 0 {
		t.Errorf("one sample above the threshold must break the clock: %v", got)
	}
	p.DisableConsolidation = true
	o.Nodes[0] = node("low", 0.1, 0.1)
	if got = UpdateUnderusedSince(p, nil, o); len(got) != 0 {
		t.Errorf("consolidation off keeps clocks %v", got)
	}
}
