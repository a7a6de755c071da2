package law

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

func gpuNode(name string, cpu float64, gpusUsed int64) types.NodeObservation {
	n := node(name, cpu, cpu)
	n.Allocatable.GPUs, n.Requested.GPUs = 4, gpusUsed
	return n
}

func TestGPUNodeInUseIsNeverIdle(t *testing.T) {
	p := types.DefaultPolicy()
	busyGPU := gpuNode("g1", 0.05, 4) // GPUs all in use by a pod asking little CPU
	if IsIdle(p, busyGPU) {
		t.Fatal("a node with its GPUs in use counted as idle")
	}
	if !IsIdle(p, gpuNode("g2", 0.05, 0)) {
		t.Fatal("a GPU node with no GPU in use and little CPU is idle")
	}
	now := t0.Add(time.Hour)
	in := input(obs(now, []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.8, 0.8), busyGPU}), now)
	in.IdleSince = UpdateIdleSince(p, nil, *in.Observation)
	in.IdleSince["g1"] = t0 // even if a clock was started somehow
	if d := Decide(in); d.Action == ActionScaleDown {
		t.Fatalf("drained a GPU node in use: %+v", d)
	}
}

func TestScaleDownSkipsNodesThatCannotBeEmptiedAndEmptyGoFirst(t *testing.T) {
	p := types.DefaultPolicy()
	p.MaxScaleDownPerDecision = 2
	now := t0.Add(time.Hour)
	blocked := node("a-blocked", 0.1, 0.1)
	blocked.DrainBlockers = []string{"pod default/db: unreplicated (no controller would recreate it)"}
	busy := node("b-idle", 0.1, 0.1)
	empty := node("c-empty", 0, 0)
	nodes := []types.NodeObservation{blocked, busy, empty, node("d", 0.5, 0.5), node("e", 0.5, 0.5)}
	in := input(obs(now, nodes), now)
	in.Policy = p
	in.IdleSince = map[string]time.Time{"a-blocked": t0, "b-idle": t0, "c-empty": t0.Add(time.Minute)}
	d := Decide(in)
	if d.Action != ActionScaleDown || strings.Join(d.RemoveNodes, ",") != "c-empty,b-idle" {
		t.Fatalf("remove = %v (%s), want c-empty then b-idle", d.RemoveNodes, d.Reason)
	}
	if len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0], "a-blocked cannot be emptied: pod default/db") {
		t.Fatalf("skipped = %v", d.Skipped)
	}
}

func TestScaleDownNeedsRoomForTheLargestPod(t *testing.T) {
	now := t0.Add(time.Hour)
	idle := node("n1", 0.25, 0.1)
	idle.LargestPod = types.Resources{MilliCPU: 1000, Memory: types.GiB}
	// The others have room in total but none for a 1-CPU pod.
	n2, n3 := node("n2", 0.8, 0.8), node("n3", 0.8, 0.8)
	in := input(obs(now, []types.NodeObservation{idle, n2, n3}), now)
	in.IdleSince = map[string]time.Time{"n1": t0}
	d := Decide(in)
	if d.Action == ActionScaleDown {
		t.Fatalf("removed a node whose largest pod fits nowhere: %+v", d)
	}
	if len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0], "largest pod") {
		t.Fatalf("skipped = %v", d.Skipped)
	}
}

func TestRepairWaitsForTimeoutsAndFreezesOnMassFailure(t *testing.T) {
	launched := t0
	machines := []Machine{
		{Name: "n1", Size: "s", GroupID: "g", CreatedAt: launched, Node: types.NodeReady},
		{Name: "n2", Size: "s", GroupID: "g", CreatedAt: launched, Node: types.NodeReady},
		{Name: "n3", Size: "s", GroupID: "g", CreatedAt: launched, Node: types.NodeReady},
		{Name: "m4", Size: "s", GroupID: "g", CreatedAt: launched},
	}
	at := func(now time.Time) Decision {
		in := input(obs(now, threeNodes()), now)
		in.Machines = machines
		return Decide(in)
	}
	if d := at(launched.Add(14 * time.Minute)); d.Action == ActionRepair || !strings.HasPrefix(d.WakeReason, "provision timeout") {
		t.Fatalf("before the provision timeout: %s, wake %q", d.Action, d.WakeReason)
	}
	d := at(launched.Add(15 * time.Minute))
	if d.Action != ActionRepair || len(d.Expire) != 1 || d.Expire[0].Name != "m4" || !strings.Contains(d.Expire[0].Reason, "never registered") {
		t.Fatalf("at the provision timeout: %+v", d)
	}
	// Two of four unready is over 45 %: frozen, nothing deleted.
	machines = append(machines, Machine{Name: "m5", Size: "s", GroupID: "g", CreatedAt: launched})
	if d := at(launched.Add(16 * time.Minute)); d.Action != ActionRepair || len(d.Expire) != 2 {
		t.Fatalf("2 of 5 unready (40 %%) is repaired: %+v", d)
	}
	machines = append(machines, Machine{Name: "m6", Size: "s", GroupID: "g", CreatedAt: launched})
	if d := at(launched.Add(16 * time.Minute)); d.Action == ActionRepair || !strings.Contains(d.Frozen, "3 of 6 nodes are unready") {
		t.Fatalf("mass failure not frozen: %s %q", d.Action, d.Frozen)
	}
}

func TestDeferredPodsSkipTheCooldownNewPodsDoNot(t *testing.T) {
	now := t0.Add(time.Hour)
	in := input(obs(now, threeNodes(), pending("gpu", t0), pending("new", t0)), now)
	in.LastScaleUp = now.Add(-time.Minute)
	if d := Decide(in); d.Action != ActionNone {
		t.Fatalf("new pods bought inside the cooldown: %s", d.Action)
	}
	in.Deferred = map[string]bool{"default/gpu": true}
	if d := Decide(in); d.Action != ActionScaleUp {
		t.Fatalf("a deferred pod waited for the cooldown: %s %v", d.Action, d.Blocked)
	}
	in.Awaiting = map[string]bool{"default/gpu": true, "default/new": true}
	if d := Decide(in); d.Action != ActionNone {
		t.Fatalf("pods awaiting their nodes bought again: %s", d.Action)
	}
}
