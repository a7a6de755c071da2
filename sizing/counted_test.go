package sizing

import (
	"fmt"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// shapedPending is n pods spread evenly over shapes distinct requests, as
// one counted entry per shape (counted) and as every pod (expanded).
func shapedPending(n, shapes int) (counted, expanded []types.PendingPod) {
	for s := range shapes {
		req := types.Resources{MilliCPU: int64(100 + 10*(s%50)), Memory: int64(128+16*(s/50)) * types.MiB}
		per := n / shapes
		if s < n%shapes {
			per++
		}
		counted = append(counted, types.PendingPod{Namespace: "tenant", Name: fmt.Sprintf("~shape-%03d", s), Requests: req, Count: per})
		for i := range per {
			expanded = append(expanded, types.PendingPod{Namespace: "tenant", Name: fmt.Sprintf("web-%03d-%05d", s, i), Requests: req})
		}
	}
	return counted, expanded
}

func TestCountedEntriesPlanLikeTheirPods(t *testing.T) {
	for _, tc := range []struct {
		name          string
		n, shapes     int
		catalog       []types.InstanceType
		maxNew, wantU int
	}{
		{"5 shapes sim", 5000, 5, flatCatalog(), 0, 0},
		{"40 shapes aws", 3000, 40, fixtureCatalog("aws"), 0, 0},
		{"ceiling cuts", 5000, 5, flatCatalog(), 10, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counted, expanded := shapedPending(tc.n, tc.shapes)
			a := PlanScaleUp(Request{Pending: counted, Catalog: tc.catalog, MaxNewNodes: tc.maxNew})
			b := PlanScaleUp(Request{Pending: expanded, Catalog: tc.catalog, MaxNewNodes: tc.maxNew})
			if a.Size != b.Size || a.NewNodes != b.NewNodes {
				t.Fatalf("counted plan %d × %s, expanded plan %d × %s", a.NewNodes, a.Size, b.NewNodes, b.Size)
			}
			if tc.maxNew > 0 && a.NewNodes > tc.maxNew {
				t.Fatalf("plan of %d nodes is past the ceiling %d", a.NewNodes, tc.maxNew)
			}
			placed, left := 0, 0
			for _, p := range a.Placements {
				if p.Count < 1 {
					t.Fatalf("placement of a counted entry without a count: %+v", p)
				}
				placed += p.Count
			}
			for _, u := range a.Unplaceable {
				left += u.Count
			}
			if placed != len(b.Placements) || left != len(b.Unplaceable) {
				t.Fatalf("counted: %d placed, %d left; expanded: %d placed, %d left", placed, left, len(b.Placements), len(b.Unplaceable))
			}
			if placed+left != tc.n {
				t.Fatalf("%d placed + %d left, want %d pods in all", placed, left, tc.n)
			}
			if tc.wantU == 0 && left != 0 {
				t.Fatalf("%d pods left unplaced: %+v", left, a.Unplaceable[0])
			}
			if tc.wantU < 0 && left == 0 {
				t.Fatal("the ceiling left every pod placed")
			}
		})
	}
}

// A counted entry that only partly fits existing room spreads over the
// existing node and new ones.
func TestCountedEntrySplitsAcrossNodes(t *testing.T) {
	cat := flatCatalog()
	existing := []types.NodeObservation{{
		Name: "n1", Size: "sim-2c4g", State: types.NodeReady,
		Allocatable: types.Resources{MilliCPU: 1800, Memory: 3584 * types.MiB, Pods: 109},
	}}
	pods := []types.PendingPod{{Namespace: "ns", Name: "~shape-a", Requests: types.Resources{MilliCPU: 500, Memory: 256 * types.MiB}, Count: 10}}
	plan := PlanScaleUp(Request{Pending: pods, Existing: existing, Catalog: cat})
	onExisting, onNew := 0, 0
	for _, p := range plan.Placements {
		if p.Node == ExistingNodePrefix+"n1" {
			onExisting += p.Count
		} else {
			onNew += p.Count
		}
	}
	if onExisting != 3 || onNew != 7 || len(plan.Unplaceable) != 0 {
		t.Fatalf("want 3 on n1 and 7 on new nodes, got %d and %d (%+v)", onExisting, onNew, plan)
	}
}

func benchShapes(b *testing.B, shapes int, catalog []types.InstanceType) {
	counted, _ := shapedPending(50_000, shapes)
	// As the pool sends them: the oldest few of each shape listed, the
	// rest counted.
	var pods []types.PendingPod
	for s, c := range counted {
		for i := range 2 {
			p := c
			p.Name, p.Count = fmt.Sprintf("web-%03d-%d", s, i), 0
			pods = append(pods, p)
		}
		c.Count -= 2
		pods = append(pods, c)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		plan := PlanScaleUp(Request{Pending: pods, Catalog: catalog})
		if plan.NewNodes == 0 {
			b.Fatal("no nodes planned")
		}
	}
}

func BenchmarkPlan50kPods5ShapesSim(b *testing.B)   { benchShapes(b, 5, flatCatalog()) }
func BenchmarkPlan50kPods500ShapesSim(b *testing.B) { benchShapes(b, 500, flatCatalog()) }
func BenchmarkPlan50kPods5ShapesAWS(b *testing.B)   { benchShapes(b, 5, fixtureCatalog("aws")) }
func BenchmarkPlan50kPods500ShapesAWS(b *testing.B) { benchShapes(b, 500, fixtureCatalog("aws")) }
