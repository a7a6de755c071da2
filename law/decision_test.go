package law

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/law/lawtest"
	"github.com/hanzoai/visor-fleet/types"
)

// The fixtures are lawtest's, shared with the pool workflow's tests.
var (
	t0             = lawtest.T0
	key            = lawtest.Key
	node           = lawtest.Node
	pending        = lawtest.Pending
	obs            = lawtest.Obs
	threeNodes     = lawtest.ThreeNodes
	withUpCooldown = lawtest.WithUpCooldown
)

// input decides with the default policy and the HIP's 5m cooldown after
// scale-up, which the cooldown tests exercise (the default has none).
func input(o *types.PoolObservation, now time.Time) DecisionInput {
	return DecisionInput{Policy: withUpCooldown(types.DefaultPolicy()), Observation: o, Now: now, Gate: OpenGate(),
		IdleSince: map[string]time.Time{}, Unplaceable: map[string]string{}, DrainBlocked: map[string]time.Time{}}
}

func TestDecideScaleUpThreshold(t *testing.T) {
	since := t0
	cases := []struct {
		name   string
		now    time.Time
		want   Action
		wakeAt time.Time
	}{
		{"just under 60s waits", since.Add(59 * time.Second), ActionNone, since.Add(60 * time.Second)},
		{"exactly 60s scales up", since.Add(60 * time.Second), ActionScaleUp, time.Time{}},
		{"over 60s scales up", since.Add(61 * time.Second), ActionScaleUp, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(input(obs(tc.now, threeNodes(), pending("p1", since)), tc.now))
			if d.Action != tc.want {
				t.Fatalf("action = %s, want %s (%s)", d.Action, tc.want, d.Reason)
			}
			if !tc.wakeAt.IsZero() && !d.WakeAt.Equal(tc.wakeAt) {
				t.Fatalf("wakeAt = %s, want %s (%s)", d.WakeAt, tc.wakeAt, d.WakeReason)
			}
			if tc.want == ActionScaleUp && (len(d.Pods) != 1 || d.MaxNewNodes != 47) {
				t.Fatalf("pods = %d, maxNew = %d; want 1 and 47", len(d.Pods), d.MaxNewNodes)
			}
		})
	}
}

func TestDecidePendingCountsFromTransitionTime(t *testing.T) {
	// Seen for the first time now, but unschedulable since 2 minutes ago:
	// it is already overdue.
	now := t0.Add(2 * time.Minute)
	d := Decide(input(obs(now, threeNodes(), pending("p1", t0)), now))
	if d.Action != ActionScaleUp {
		t.Fatalf("action = %s, want scale-up", d.Action)
	}
}

func TestDecideScaleUpCooldownAndCeiling(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	o := obs(now, threeNodes(), pending("p1", t0))

	in := input(o, now)
	in.LastScaleUp = now.Add(-4*time.Minute - 59*time.Second)
	d := Decide(in)
	if d.Action != ActionNone || !strings.Contains(strings.Join(d.Blocked, ";"), "cooldown after scale-up") {
		t.Fatalf("in cooldown: action %s blocked %v", d.Action, d.Blocked)
	}
	if want := in.LastScaleUp.Add(5 * time.Minute); !d.WakeAt.Equal(want) {
		t.Fatalf("wake at %s, want cooldown end %s", d.WakeAt, want)
	}

	in.LastScaleUp = now.Add(-5 * time.Minute)
	if d := Decide(in); d.Action != ActionScaleUp {
		t.Fatalf("cooldown over: action %s", d.Action)
	}

	in = input(o, now)
	in.Policy.MaxNodes = 3
	d = Decide(in)
	if d.Action != ActionNone || !strings.Contains(strings.Join(d.Blocked, ";"), "ceiling") {
		t.Fatalf("at ceiling: action %s blocked %v", d.Action, d.Blocked)
	}
	in.Policy.MaxNodes = 4
	if d := Decide(in); d.Action != ActionScaleUp || d.MaxNewNodes != 1 {
		t.Fatalf("one below ceiling: action %s maxNew %d", d.Action, d.MaxNewNodes)
	}
}

func TestDecideFloor(t *testing.T) {
	now := t0
	d := Decide(input(obs(now, []types.NodeObservation{node("n1", 0.8, 0.8)}), now))
	if d.Action != ActionScaleUp || d.MinNewNodes != 1 {
		t.Fatalf("below floor: action %s minNew %d", d.Action, d.MinNewNodes)
	}
	in := input(obs(now, []types.NodeObservation{node("n1", 0.8, 0.8)}), now)
	in.InFlightNodes = 1
	if d := Decide(in); d.Action == ActionScaleUp {
		t.Fatalf("floor reached with in-flight node, still scaling up: %s", d.Reason)
	}
}

func TestDecideUnplaceableNotRetried(t *testing.T) {
	now := t0.Add(5 * time.Minute)
	in := input(obs(now, threeNodes(), pending("huge", t0)), now)
	in.Unplaceable["default/huge"] = "needs 64 CPUs"
	if d := Decide(in); d.Action != ActionNone {
		t.Fatalf("unplaceable pod retried: %s", d.Reason)
	}
}

func idleInput(now time.Time, idleFor time.Duration) DecisionInput {
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.1, 0.1)}
	in := input(obs(now, nodes), now)
	in.IdleSince["n3"] = now.Add(-idleFor)
	return in
}

func TestDecideIdleWindow(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := []struct {
		name    string
		idleFor time.Duration
		want    Action
	}{
		{"idle 9m59s waits", 10*time.Minute - time.Second, ActionNone},
		{"idle 10m removes", 10 * time.Minute, ActionScaleDown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(idleInput(now, tc.idleFor))
			if d.Action != tc.want {
				t.Fatalf("action %s, want %s: %s %v", d.Action, tc.want, d.Reason, d.Blocked)
			}
			if tc.want == ActionScaleDown && (len(d.RemoveNodes) != 1 || d.RemoveNodes[0] != "n3") {
				t.Fatalf("remove %v, want [n3]", d.RemoveNodes)
			}
			if tc.want == ActionNone && !strings.HasPrefix(d.WakeReason, "idle window n3") {
				t.Fatalf("wake reason %q", d.WakeReason)
			}
		})
	}
}

func TestIdleThresholdsBoundaries(t *testing.T) {
	p := types.DefaultPolicy()
	cases := []struct {
		cpu, mem float64
		idle     bool
	}{
		{0.29, 0.39, true},
		{0.30, 0.10, false}, // CPU at the threshold is not below it
		{0.10, 0.40, false},
		{0.0, 0.0, true},
	}
	for _, tc := range cases {
		if got := IsIdle(p, node("n", tc.cpu, tc.mem)); got != tc.idle {
			t.Errorf("cpu %.2f mem %.2f: idle = %t, want %t", tc.cpu, tc.mem, got, tc.idle)
		}
	}
	notReady := node("n", 0, 0)
	notReady.State = types.NodeNotReady
	if IsIdle(p, notReady) {
		t.Error("a not-ready node counted as idle")
	}
}

func TestUpdateIdleSinceBrokenByOneBusySample(t *testing.T) {
	p := types.DefaultPolicy()
	idle := map[string]time.Time{}
	idle = UpdateIdleSince(p, idle, *obs(t0, []types.NodeObservation{node("n1", 0.1, 0.1)}))
	idle = UpdateIdleSince(p, idle, *obs(t0.Add(5*time.Minute), []types.NodeObservation{node("n1", 0.1, 0.1)}))
	if !idle["n1"].Equal(t0) {
		t.Fatalf("idle clock moved: %s", idle["n1"])
	}
	idle = UpdateIdleSince(p, idle, *obs(t0.Add(6*time.Minute), []types.NodeObservation{node("n1", 0.5, 0.1)}))
	if _, ok := idle["n1"]; ok {
		t.Fatal("busy sample did not break the idle window")
	}
	idle = UpdateIdleSince(p, idle, *obs(t0.Add(7*time.Minute), []types.NodeObservation{node("n1", 0.1, 0.1)}))
	if !idle["n1"].Equal(t0.Add(7 * time.Minute)) {
		t.Fatalf("idle clock after break = %s, want restart at 7m", idle["n1"])
	}
}

func TestDecideScaleDownGuards(t *testing.T) {
	now := t0.Add(time.Hour)
	t.Run("stale observation freezes", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.Observation.ObservedAt = now.Add(-11 * time.Minute)
		d := Decide(in)
		if d.Action != ActionNone || !strings.Contains(d.Frozen, "stale") {
			t.Fatalf("action %s frozen %q", d.Action, d.Frozen)
		}
	})
	t.Run("missing observation freezes", func(t *testing.T) {
		d := Decide(input(nil, now))
		if d.Action != ActionNone || d.Frozen == "" {
			t.Fatalf("action %s frozen %q", d.Action, d.Frozen)
		}
	})
	t.Run("unreachable cluster freezes", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.Gate = Gate{AllowScaleUp: true, Reason: "cluster unreachable"}
		if d := Decide(in); d.Action != ActionNone || !strings.Contains(d.Frozen, "unreachable") {
			t.Fatalf("action %s frozen %q", d.Action, d.Frozen)
		}
	})
	t.Run("floor", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.Policy.MinNodes = 3
		if d := Decide(in); d.Action != ActionNone || !strings.Contains(strings.Join(d.Blocked, ";"), "floor") {
			t.Fatalf("action %s blocked %v", d.Action, d.Blocked)
		}
	})
	t.Run("scale-down cooldown", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.Policy.ScaleDownCooldown = types.Duration(10 * time.Minute) // the HIP's
		in.LastScaleDown = now.Add(-9 * time.Minute)
		d := Decide(in)
		if d.Action != ActionNone || !d.WakeAt.Equal(in.LastScaleDown.Add(10*time.Minute)) {
			t.Fatalf("action %s wake %s", d.Action, d.WakeAt)
		}
		in.LastScaleDown = now.Add(-10 * time.Minute)
		if d := Decide(in); d.Action != ActionScaleDown {
			t.Fatalf("cooldown over: action %s %v", d.Action, d.Blocked)
		}
	})
	t.Run("pending pods block scale-down", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.Observation.PendingPods = []types.PendingPod{pending("p", now)}
		if d := Decide(in); d.Action != ActionNone {
			t.Fatalf("action %s with a pod pending", d.Action)
		}
	})
	t.Run("a pod reported as fitting no size does not block scale-down", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		huge := pending("huge", now.Add(-time.Hour))
		in.Observation.PendingPods = []types.PendingPod{huge}
		in.Unplaceable = map[string]string{huge.Key(): "CPU: no size has 64 cores"}
		if d := Decide(in); d.Action != ActionScaleDown {
			t.Fatalf("action %s blocked %v, want scale-down past the unplaceable pod", d.Action, d.Blocked)
		}
		in.Observation.PendingPods = append(in.Observation.PendingPods, pending("p", now))
		if d := Decide(in); d.Action != ActionNone {
			t.Fatalf("action %s with another pod pending", d.Action)
		}
	})
	t.Run("in-flight nodes block scale-down", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.InFlightNodes = 1
		if d := Decide(in); d.Action != ActionNone {
			t.Fatalf("action %s with nodes in flight", d.Action)
		}
	})
	t.Run("drain-blocked node waits", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.DrainBlocked["n3"] = now.Add(time.Minute)
		if d := Decide(in); d.Action != ActionNone || d.WakeAt != now.Add(time.Minute) {
			t.Fatalf("action %s wake %s", d.Action, d.WakeAt)
		}
	})
	t.Run("draining phase stops scale-up not scale-down", func(t *testing.T) {
		in := idleInput(now, 20*time.Minute)
		in.Gate = Gate{AllowScaleDown: true, Reason: "cluster is draining"}
		if d := Decide(in); d.Action != ActionScaleDown {
			t.Fatalf("action %s", d.Action)
		}
		in = input(obs(now, threeNodes(), pending("p1", t0)), now)
		in.Gate = Gate{AllowScaleDown: true, Reason: "cluster is draining"}
		if d := Decide(in); d.Action != ActionNone {
			t.Fatalf("draining cluster scaled up")
		}
	})
}

func TestDecideRemovesLongestIdleFirstAndBounds(t *testing.T) {
	now := t0.Add(time.Hour)
	nodes := []types.NodeObservation{node("a", 0.1, 0.1), node("b", 0.1, 0.1), node("c", 0.1, 0.1), node("d", 0.1, 0.1)}
	in := input(obs(now, nodes), now)
	in.IdleSince = map[string]time.Time{"a": now.Add(-11 * time.Minute), "b": now.Add(-30 * time.Minute), "c": now.Add(-20 * time.Minute), "d": now.Add(-20 * time.Minute)}
	in.Policy.MaxScaleDownPerDecision = 3
	d := Decide(in)
	// Floor 2 of 4 nodes: at most 2 go, longest idle first.
	if got := strings.Join(d.RemoveNodes, ","); got != "b,c" {
		t.Fatalf("remove %s, want b,c", got)
	}
}

func TestPolicyValidateNamesField(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 5, 3
	p.IdleWindow = types.Duration(-time.Second)
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "policy.minNodes") || !strings.Contains(err.Error(), "policy.idleWindow") {
		t.Fatalf("err = %v", err)
	}
}

// TestScaleDownWaitsForPodsTheSchedulerHasNotPlaced: an idle node past
// its window stays while kube-scheduler still has pods of the pool to
// place (their room is on it), and the decision says why.
func TestScaleDownWaitsForPodsTheSchedulerHasNotPlaced(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	in := idleInput(now, time.Hour)
	in.Rules.BudgetPaces = true
	if d := Decide(in); d.Action != ActionScaleDown {
		t.Fatalf("without unplaced pods the idle node goes: %+v", d)
	}
	cp := *in.Observation
	cp.Unbound = 3
	in.Observation = &cp
	d := Decide(in)
	if d.Action != ActionNone {
		t.Fatalf("scale-down with 3 pods still to place: %+v", d)
	}
	if !strings.Contains(strings.Join(d.Blocked, "; "), "3 pods of the pool not placed by kube-scheduler yet") {
		t.Errorf("blocked does not say why: %q", d.Blocked)
	}
	if !strings.Contains(d.Held["n3"], "pods kube-scheduler has not placed yet") {
		t.Errorf("the idle node kept does not say why: %v", d.Held)
	}
}
