package sizing

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// zonalCatalog: the same 4-CPU size offered in one zone each, plus one
// spanning both, so a plan can say where its node goes.
func zonalCatalog() []types.InstanceType {
	over := func(_, _, _ int64) types.Resources {
		return types.Resources{MilliCPU: 200, Memory: 512 * types.MiB, Pods: 1}
	}
	a := CatalogRow{"c4-a", "c", 4, 8 * 1024, 0, "", 20, 0.10}.InstanceType("", over)
	a.Zones = []string{"z-a"}
	b := CatalogRow{"c4-b", "c", 4, 8 * 1024, 0, "", 20, 0.11}.InstanceType("", over)
	b.Zones = []string{"z-b"}
	return []types.InstanceType{a, b}
}

func spreadPods(n int, counts map[string]int32) []types.PendingPod {
	return constrained("web", n, &types.PodScheduling{
		Labels: appLabels("web"),
		TopologySpread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selectApp("web")}},
		ZoneSpreadPods: []map[string]int32{counts},
	})
}

func TestZoneSpreadCountsPodsAlreadyRunning(t *testing.T) {
	tests := []struct {
		name     string
		counts   map[string]int32
		existing []types.NodeObservation
		// wantSize is bought (1 node) or, with wantOn, nothing and the pod
		// goes there; wantNoFit: nothing at all.
		wantSize, wantOn string
		wantNoFit        bool
	}{
		{name: "nothing running: the cheaper zone", counts: nil, wantSize: "c4-a"},
		{name: "balanced: the cheaper zone", counts: map[string]int32{"z-a": 2, "z-b": 2}, wantSize: "c4-a"},
		{name: "zone a already ahead by maxSkew: only b", counts: map[string]int32{"z-a": 3, "z-b": 2}, wantSize: "c4-b"},
		{name: "zone a ahead, and b has no pods at all", counts: map[string]int32{"z-a": 1}, wantSize: "c4-b"},
		{name: "free room in the refused zone does not count", counts: map[string]int32{"z-a": 3, "z-b": 2},
			existing: []types.NodeObservation{zonalNode("n-a", "c4-a", "z-a")}, wantSize: "c4-b"},
		{name: "free room in the allowed zone takes it", counts: map[string]int32{"z-a": 2, "z-b": 3},
			existing: []types.NodeObservation{zonalNode("n-a", "c4-a", "z-a")}, wantOn: "n-a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanScaleUp(Request{Pending: spreadPods(1, tc.counts), Catalog: zonalCatalog(), Existing: tc.existing})
			switch {
			case tc.wantOn != "":
				if p.NewNodes != 0 || len(p.Placements) != 1 || p.Placements[0].Node != ExistingNodePrefix+tc.wantOn {
					t.Fatalf("want the pod on %s; got %d × %q, placements %+v, unplaceable %+v", tc.wantOn, p.NewNodes, p.Size, p.Placements, p.Unplaceable)
				}
			default:
				if p.Size != tc.wantSize || p.NewNodes != 1 || len(p.Unplaceable) != 0 {
					t.Fatalf("want 1 × %s; got %d × %q, unplaceable %+v", tc.wantSize, p.NewNodes, p.Size, p.Unplaceable)
				}
			}
		})
	}
	// Only zone a on offer, and it is ahead: nothing is bought, and the
	// reason names the spread.
	onlyA := zonalCatalog()[:1]
	existingB := zonalNode("full-b", "c4-b", "z-b")
	existingB.Requested = existingB.Allocatable
	p := PlanScaleUp(Request{Pending: spreadPods(1, map[string]int32{"z-a": 3, "z-b": 2}), Catalog: onlyA,
		Existing: []types.NodeObservation{existingB}})
	if p.NewNodes != 0 || len(p.Unplaceable) != 1 || p.Unplaceable[0].Code != CodeNoFit ||
		p.Unplaceable[0].Reason != "topology spread on topology.kubernetes.io/zone: every zone a new node could join already holds more matching pods than maxSkew allows over the emptiest zone" {
		t.Fatalf("want nothing bought and a spread reason, got %d × %q, unplaceable %+v", p.NewNodes, p.Size, p.Unplaceable)
	}
}

func zonalNode(name, size, zone string) types.NodeObservation {
	n := node(name, size, types.NodeReady, types.Resources{MilliCPU: 3800, Memory: 7 * types.GiB, Pods: 19}, types.Resources{})
	n.Labels = map[string]string{corev1.LabelInstanceTypeStable: size, corev1.LabelTopologyZone: zone, "disktype": "ssd", "generation": "7"}
	return n
}
