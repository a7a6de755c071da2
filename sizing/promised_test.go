package sizing

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// A booting node bought for one pod is not free room for the next: the
// next pod buys its own node. Without the promise it would "fit" the
// booting node and buy nothing.
func TestPromisedPodsTakeBootingRoomFirst(t *testing.T) {
	catalog := flatCatalog()
	it := catalog[0] // sim-2c4g: room for one 1500m pod
	booting := []types.NodeObservation{{Name: "n1", Size: it.Name, State: types.NodeProvisioning, Allocatable: it.Allocatable()}}
	pod := func(name string) types.PendingPod {
		return types.PendingPod{Namespace: "app", Name: name, Requests: types.Resources{MilliCPU: 1500, Memory: types.GiB}, UnschedulableSince: time.Unix(0, 0)}
	}
	restricted := []types.InstanceType{it}
	without := PlanScaleUp(Request{Pending: []types.PendingPod{pod("b")}, Existing: booting, Catalog: restricted})
	if without.NewNodes != 0 {
		t.Fatalf("control: without the promise the booting node holds b, got %d new", without.NewNodes)
	}
	with := PlanScaleUp(Request{Pending: []types.PendingPod{pod("b")}, Promised: []types.PendingPod{pod("a")}, Existing: booting, Catalog: restricted})
	if with.NewNodes != 1 || with.Size != it.Name {
		t.Fatalf("a's node is promised: b must buy one %s, got %d × %q (placements %+v)", it.Name, with.NewNodes, with.Size, with.Placements)
	}
	for _, pl := range with.Placements {
		if pl.Pod == "app/a" {
			t.Errorf("a promised pod is not part of the plan: %+v", pl)
		}
	}
	// A promise the booting room cannot hold takes nothing and buys nothing.
	big := pod("huge")
	big.Requests.MilliCPU = 100000
	if p := PlanScaleUp(Request{Pending: []types.PendingPod{pod("b")}, Promised: []types.PendingPod{big}, Existing: booting, Catalog: restricted}); p.NewNodes != 0 {
		t.Errorf("an unplaceable promise bought or took room: %d new", p.NewNodes)
	}
	if booting[0].Requested != (types.Resources{}) {
		t.Errorf("the caller's nodes were changed: %+v", booting[0].Requested)
	}
}

// A booting node promised to a replica that repels its siblings
// (hostname anti-affinity) is no room for the next sibling, however much
// CPU it has left: the scheduler would refuse it there. A pod without
// rules may still use the room.
func TestPromisedAntiAffinityPodKeepsItsSiblingsOff(t *testing.T) {
	catalog := flatCatalog()
	it := catalog[len(catalog)-1] // the largest: room for many small pods
	booting := []types.NodeObservation{{Name: "n1", Size: it.Name, State: types.NodeProvisioning, Allocatable: it.Allocatable()}}
	anti := []corev1.PodAffinityTerm{{LabelSelector: selectApp("web"), TopologyKey: corev1.LabelHostname}}
	replica := func(name string) types.PendingPod {
		return types.PendingPod{Namespace: "app", Name: name, Requests: types.Resources{MilliCPU: 100, Memory: 64 << 20},
			UnschedulableSince: time.Unix(0, 0), Scheduling: &types.PodScheduling{Labels: appLabels("web"), AntiAffinity: anti}}
	}
	restricted := []types.InstanceType{it}
	p := PlanScaleUp(Request{Pending: []types.PendingPod{replica("web-1")}, Promised: []types.PendingPod{replica("web-0")}, Existing: booting, Catalog: restricted})
	if p.NewNodes != 1 {
		t.Fatalf("web-0 is promised n1 and repels web-1: web-1 must buy its own node, got %d new (placements %+v)", p.NewNodes, p.Placements)
	}
	plain := types.PendingPod{Namespace: "app", Name: "batch", Requests: types.Resources{MilliCPU: 100, Memory: 64 << 20}, UnschedulableSince: time.Unix(0, 0)}
	if p := PlanScaleUp(Request{Pending: []types.PendingPod{plain}, Promised: []types.PendingPod{replica("web-0")}, Existing: booting, Catalog: restricted}); p.NewNodes != 0 {
		t.Errorf("a pod without rules may share n1 with the promised replica: got %d new", p.NewNodes)
	}
}
