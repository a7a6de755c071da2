package law

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// budgetInput is a pool of idle nodes under the written defaults with a
// budget of one node draining at once, every node idle since an hour
// before now (past both windows).
func budgetInput(now time.Time, nodes []types.NodeObservation) DecisionInput {
	p := types.DefaultPolicy()
	p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 1}
	in := DecisionInput{Policy: p, Observation: obs(now, nodes), Now: now, Gate: OpenGate(), Rules: AllRules(),
		IdleSince: map[string]time.Time{}, UnderusedSince: map[string]time.Time{}, DrainBlocked: map[string]time.Time{}}
	for _, n := range nodes {
		in.IdleSince[n.Name] = now.Add(-time.Hour)
		in.UnderusedSince[n.Name] = now.Add(-time.Hour)
	}
	return in
}

func idleNodes(n int) []types.NodeObservation {
	var out []types.NodeObservation
	for i := 1; i <= n; i++ {
		out = append(out, node(fmt.Sprintf("n%d", i), 0, 0))
	}
	return out
}

// Under a budget, the cooldown after scale-down does not hold back a
// drain the budget has a slot for; a run recorded before the rule keeps
// the cooldown.
func TestBudgetPacesInsteadOfTheCooldown(t *testing.T) {
	now := t0.Add(time.Hour)
	in := budgetInput(now, idleNodes(6))
	in.LastScaleDown = now.Add(-10 * time.Second)
	d := Decide(in)
	if d.Action != ActionScaleDown || len(d.RemoveNodes) != 1 {
		t.Fatalf("budget of 1 with a free slot: %s %v (%s; blocked %v), want one node removed", d.Action, d.RemoveNodes, d.Reason, d.Blocked)
	}
	if d.Held["n2"] == "" || !strings.Contains(d.Held["n2"], "disruption budget") {
		t.Fatalf("the idle nodes the budget keeps are not said to be: %v", d.Held)
	}
	in.Rules.BudgetPaces = false
	if d := Decide(in); d.Action != ActionNone || len(d.Held) > 0 {
		t.Fatalf("without BudgetPaces: %s %v held %v, want the cooldown and no held list", d.Action, d.RemoveNodes, d.Held)
	}
}

// A node the pool drained and deleted, its Node object lingering as
// deleting or cordoned, holds no drain slot.
func TestBudgetRemovedNodeHoldsNoSlot(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, state := range []types.NodeState{types.NodeDeleting, types.NodeCordoned} {
		nodes := idleNodes(6)
		nodes[0].State = state
		in := budgetInput(now, nodes)
		in.Removed = map[string]time.Time{"n1": now.Add(-time.Minute)}
		if d := Decide(in); d.Action != ActionScaleDown || len(d.RemoveNodes) != 1 || d.RemoveNodes[0] == "n1" {
			t.Fatalf("%s removed node lingering: %s %v (%v), want another node removed", state, d.Action, d.RemoveNodes, d.Blocked)
		}
		// One the pool did not remove is a drain under way.
		in.Removed = nil
		if d := Decide(in); d.Action != ActionNone || !strings.Contains(strings.Join(d.Blocked, "\n"), "disruption budget") {
			t.Fatalf("%s node the pool did not remove: %s %v (%v), want the budget to hold", state, d.Action, d.RemoveNodes, d.Blocked)
		}
	}
}

// Idle nodes kept past their idle window say which rule keeps them and
// until when, in Held and in a Blocked line.
func TestHeldIdleNamesTheRule(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := []struct {
		name  string
		edit  func(in *DecisionInput)
		rule  string
		until bool
	}{
		{"budget", func(in *DecisionInput) {
			in.Observation.Nodes = append(in.Observation.Nodes, node("drain", 0, 0))
			in.Observation.Nodes[len(in.Observation.Nodes)-1].State = types.NodeCordoned
		}, "disruption budget (1 draining at once)", false},
		{"window", func(in *DecisionInput) {
			in.Policy.Disruption.Windows = []types.DisruptionWindow{{Name: "day", Schedule: "0 0 * * *", TimeZone: "UTC", Duration: types.Duration(23 * time.Hour), ScaleDown: types.ScaleDownForbidden}}
		}, "disruption window", true},
		{"cooldown", func(in *DecisionInput) {
			in.Policy.Disruption = nil
			in.LastScaleDown = now.Add(-10 * time.Second)
		}, "cooldown after scale-down", true},
		{"floor", func(in *DecisionInput) { in.Policy.MinNodes = 4 }, "floor of 4", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := budgetInput(now, idleNodes(4))
			tc.edit(&in)
			d := Decide(in)
			if d.Action != ActionNone {
				t.Fatalf("%s: %v, want nothing removed", d.Action, d.RemoveNodes)
			}
			if len(d.Held) != 4 {
				t.Fatalf("held %v, want the 4 idle nodes", d.Held)
			}
			for n, why := range d.Held {
				if !strings.Contains(why, tc.rule) || strings.Contains(why, " until 2") != tc.until {
					t.Fatalf("%s held for %q, want %q (until given: %v)", n, why, tc.rule, tc.until)
				}
			}
			if !strings.Contains(strings.Join(d.Blocked, "\n"), "idle past the idle window") {
				t.Fatalf("no Blocked line says why: %v", d.Blocked)
			}
		})
	}
}

// The property: for any policy with a floor and a disruption budget, idle
// nodes above the floor are removed when nothing blocks them, within the
// windows plus ceil(idle/budget) decisions, never more draining at once
// than the budget allows. Removed nodes linger a sample as deleting.
func TestPropertyIdleNodesAboveTheFloorGo(t *testing.T) {
	rng := rand.New(rand.NewSource(47))
	const step = 30 * time.Second
	for trial := 0; trial < 500; trial++ {
		p := types.DefaultPolicy()
		p.MinNodes = rng.Intn(6)
		p.MaxNodes = 50
		p.IdleWindow = types.Duration(time.Duration(1+rng.Intn(20)) * step)
		p.ConsolidateAfter = types.Duration(time.Duration(1+rng.Intn(20)) * step)
		p.ScaleDownCooldown = types.Duration(time.Duration(rng.Intn(40)) * step)
		p.DisableConsolidation = rng.Intn(3) == 0
		p.Disruption = &types.DisruptionBudget{}
		if rng.Intn(2) == 0 {
			p.Disruption.MaxDrainingNodes = 1 + rng.Intn(4)
		} else {
			p.Disruption.MaxDrainingPercent = 1 + rng.Intn(60)
		}
		if rng.Intn(3) == 0 {
			p.MaxScaleDownPerDecision = 1 + rng.Intn(3)
		}
		total := p.MinNodes + rng.Intn(15)
		nodes := idleNodes(total)
		desc := fmt.Sprintf("trial %d: floor %d, %d nodes, budget %+v, idle window %s, consolidateAfter %s, cooldown %s, perDecision %d, consolidation off %v",
			trial, p.MinNodes, total, *p.Disruption, p.IdleWindow, p.ConsolidateAfter, p.ScaleDownCooldown, p.MaxScaleDownPerDecision, p.DisableConsolidation)
		var idleSince, underused map[string]time.Time
		var lastDown time.Time
		removed := map[string]time.Time{}
		var lingering []types.NodeObservation
		now := t0
		// The slowest pace: one node a decision.
		bound := int((p.IdleWindow.D()+p.ConsolidateAfter.D())/step) + total + 3
		for i := 0; i < bound && len(nodes) > p.MinNodes; i++ {
			now = now.Add(step)
			o := obs(now, append(append([]types.NodeObservation(nil), nodes...), lingering...))
			lingering = nil
			idleSince = UpdateIdleSince(p, idleSince, *o)
			underused = UpdateUnderusedSince(p, underused, *o)
			d := Decide(DecisionInput{Policy: p, Observation: o, Now: now, Gate: OpenGate(), Rules: AllRules(),
				IdleSince: idleSince, UnderusedSince: underused, LastScaleDown: lastDown, Removed: removed})
			if d.Action == ActionNone {
				continue
			}
			if d.Action != ActionScaleDown {
				t.Fatalf("%s: step %d: %s (%s), want only scale-down", desc, i, d.Action, d.Reason)
			}
			if max := MaxDraining(p, len(nodes)); len(d.RemoveNodes) > max {
				t.Fatalf("%s: step %d: %d nodes drained at once, the budget allows %d", desc, i, len(d.RemoveNodes), max)
			}
			gone := map[string]bool{}
			for _, n := range d.RemoveNodes {
				gone[n] = true
				removed[n] = now
			}
			kept := nodes[:0]
			for _, n := range nodes {
				if gone[n.Name] {
					n.State = types.NodeDeleting
					lingering = append(lingering, n)
					continue
				}
				kept = append(kept, n)
			}
			nodes = kept
			lastDown = now
		}
		if len(nodes) != p.MinNodes {
			t.Fatalf("%s: %d nodes after %d decisions, want the floor of %d", desc, len(nodes), bound, p.MinNodes)
		}
	}
}

// A node whose drain was refused is drained again once its retry time
// passes, without a fresh idle window (its drain's cordon broke its idle
// clock, not its idleness); before RetryBlocked it waited one.
func TestRetryBlockedSkipsAFreshIdleWindow(t *testing.T) {
	now := t0.Add(time.Hour)
	in := budgetInput(now, []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.05, 0.05)})
	in.Policy.Disruption = nil
	in.IdleSince = map[string]time.Time{"n3": now.Add(-30 * time.Second)}
	in.UnderusedSince = map[string]time.Time{"n3": now.Add(-30 * time.Second)}
	in.DrainBlocked = map[string]time.Time{"n3": now.Add(-time.Second)}
	if d := Decide(in); d.Action != ActionScaleDown || len(d.RemoveNodes) != 1 || d.RemoveNodes[0] != "n3" {
		t.Fatalf("retry of a refused drain: %s %v (%v), want n3 removed", d.Action, d.RemoveNodes, d.Blocked)
	}
	in.DrainBlocked["n3"] = now.Add(time.Minute)
	if d := Decide(in); d.Action != ActionNone || !d.WakeAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("before its retry time: %s, wake %s (%s), want a wake at the retry", d.Action, d.WakeAt, d.WakeReason)
	}
	in.DrainBlocked["n3"] = now.Add(-time.Second)
	in.Rules.RetryBlocked = false
	if d := Decide(in); d.Action != ActionNone {
		t.Fatalf("without RetryBlocked: %s %v, want a fresh window", d.Action, d.RemoveNodes)
	}
}
