package sizing

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// pods makes n identical pending pods named <prefix>-<i> in namespace app.
func pods(prefix string, n int, cpu, mem int64) []types.PendingPod {
	out := make([]types.PendingPod, n)
	for i := range out {
		out[i] = types.PendingPod{Namespace: "app", Name: fmt.Sprintf("%s-%d", prefix, i),
			Requests: types.Resources{MilliCPU: cpu, Memory: mem}}
	}
	return out
}

func gpuPod(name string, gpus int64, model string) types.PendingPod {
	return types.PendingPod{Namespace: "app", Name: name, GPUModel: model,
		Requests: types.Resources{MilliCPU: 2000, Memory: 8 * types.GiB, GPUs: gpus}}
}

func node(name, size string, state types.NodeState, alloc, requested types.Resources) types.NodeObservation {
	return types.NodeObservation{Name: name, Size: size, State: state, Allocatable: alloc, Requested: requested}
}

func concat(lists ...[]types.PendingPod) []types.PendingPod {
	var out []types.PendingPod
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func TestPlanScaleUp(t *testing.T) {
	gi := types.GiB
	simAlloc := func(name string) types.Resources {
		t, _ := catalogEntry(flatCatalog(), name)
		return t.Allocatable()
	}
	tests := []struct {
		name      string
		req       Request
		wantSize  string
		wantNodes int
		wantCost  float64
		// wantUnplaced maps code to how many pods get it.
		wantUnplaced map[string]int
		// wantReason is a substring of the first Unplaceable's reason.
		wantReason string
		// wantOn maps a pod key to its node.
		wantOn map[string]string
	}{
		{
			name: "nothing pending buys nothing",
			req:  Request{Catalog: flatCatalog()},
		},
		{
			// sim-4c8g holds 3 per node (4 nodes, $0.16); sim-8c16g holds 7
			// (2 nodes, $0.16): same cost, fewer nodes wins.
			name:     "cost tie goes to fewer nodes",
			req:      Request{Pending: pods("web", 10, 1000, gi), Catalog: flatCatalog()},
			wantSize: "sim-8c16g", wantNodes: 2, wantCost: 0.16,
		},
		{
			// 1900m fits sim-2c4g's raw 2000m but not its 1800m
			// allocatable: overhead rules the small size out.
			name:     "overhead rules out a size the raw capacity fits",
			req:      Request{Pending: pods("api", 4, 1900, gi), Catalog: flatCatalog()},
			wantSize: "sim-8c16g", wantNodes: 1, wantCost: 0.08,
		},
		{
			// 200 tiny pods: CPU and memory would allow hundreds per
			// node, the 109 pod slots do not.
			name:     "pod slots bound the node",
			req:      Request{Pending: pods("tiny", 200, 10, 10*types.MiB), Catalog: flatCatalog()},
			wantSize: "sim-2c4g", wantNodes: 2, wantCost: 0.04,
		},
		{
			name: "a pod bigger than every size is reported, the rest planned",
			req: Request{
				Pending: concat(pods("web", 3, 1000, gi), pods("huge", 1, 40000, gi)),
				Catalog: flatCatalog(),
			},
			wantSize: "sim-4c8g", wantNodes: 1, wantCost: 0.04,
			wantUnplaced: map[string]int{CodeNoFit: 1},
			wantReason:   "needs 40000m CPU, largest allowed size sim-16c64g allocates 15800m",
		},
		{
			name:         "memory is named when memory is the problem",
			req:          Request{Pending: pods("cache", 1, 1000, 100*gi), Catalog: flatCatalog()},
			wantUnplaced: map[string]int{CodeNoFit: 1},
			wantReason:   "needs 100Gi memory, largest allowed size sim-16c64g allocates 63.5Gi",
		},
		{
			name:         "no GPU sizes",
			req:          Request{Pending: []types.PendingPod{gpuPod("train", 1, "")}, Catalog: flatCatalog()[:4]},
			wantUnplaced: map[string]int{CodeNoFit: 1},
			wantReason:   "needs 1 GPU(s), no allowed size has GPUs",
		},
		{
			name:         "GPU model must match",
			req:          Request{Pending: []types.PendingPod{gpuPod("train", 1, "H100")}, Catalog: flatCatalog()},
			wantUnplaced: map[string]int{CodeNoFit: 1},
			wantReason:   "needs GPU model H100, allowed sizes offer A10",
		},
		{
			name:     "GPU pod gets the GPU size",
			req:      Request{Pending: []types.PendingPod{gpuPod("infer", 1, "A10")}, Catalog: flatCatalog()},
			wantSize: "sim-gpu-8c32g-1xa10", wantNodes: 1, wantCost: 0.60,
		},
		{
			// The CPU pods do not ride along on the GPU node: this
			// decision buys the cheap CPU size, the GPU pod waits for the
			// next one.
			name: "CPU pods stay off GPU sizes, one size per decision",
			req: Request{
				Pending: concat(pods("web", 6, 1000, gi), []types.PendingPod{gpuPod("infer", 1, "A10")}),
				Catalog: flatCatalog(),
			},
			wantSize: "sim-8c16g", wantNodes: 1, wantCost: 0.08,
			wantUnplaced: map[string]int{CodeOtherSize: 1},
			wantReason:   "fits sim-gpu-8c32g-1xa10, but this decision grows sim-8c16g",
		},
		{
			name: "a GPU-only catalog still takes CPU pods",
			req: Request{
				Pending: pods("web", 6, 1000, gi),
				Catalog: flatCatalog()[4:],
			},
			wantSize: "sim-gpu-8c32g-1xa10", wantNodes: 1, wantCost: 0.60,
		},
		{
			// The ceiling allows one node: the largest size holds the most
			// pods, and what is left is reported against the ceiling.
			name:     "ceiling truncates and prefers the size that places most",
			req:      Request{Pending: pods("web", 20, 1000, gi), Catalog: flatCatalog(), MaxNewNodes: 1},
			wantSize: "sim-16c64g", wantNodes: 1, wantCost: 0.20,
			wantUnplaced: map[string]int{CodeCeiling: 5},
			wantReason:   "ceiling allows 1 more node(s)",
		},
		{
			name:         "at the ceiling nothing is bought",
			req:          Request{Pending: pods("web", 2, 1000, gi), Catalog: flatCatalog(), MaxNewNodes: -1},
			wantUnplaced: map[string]int{CodeCeiling: 2},
			wantReason:   "at its ceiling",
		},
		{
			name: "free room on a ready node is used first",
			req: Request{
				Pending: pods("web", 3, 1000, gi),
				Existing: []types.NodeObservation{
					node("n1", "sim-8c16g", types.NodeReady, simAlloc("sim-8c16g"), types.Resources{MilliCPU: 4000, Memory: 4 * gi, Pods: 5}),
				},
				Catalog: flatCatalog(),
			},
			wantOn: map[string]string{"app/web-0": "existing:n1", "app/web-2": "existing:n1"},
		},
		{
			name: "a booting node's room counts, so it is not bought twice",
			req: Request{
				Pending: pods("web", 7, 1000, gi),
				Existing: []types.NodeObservation{
					node("booting", "sim-8c16g", types.NodeProvisioning, simAlloc("sim-8c16g"), types.Resources{}),
				},
				Catalog: flatCatalog(),
			},
			wantOn: map[string]string{"app/web-6": "existing:booting"},
		},
		{
			name: "cordoned, not-ready and deleting nodes give no room",
			req: Request{
				Pending: pods("web", 1, 1000, gi),
				Existing: []types.NodeObservation{
					node("a", "sim-8c16g", types.NodeCordoned, simAlloc("sim-8c16g"), types.Resources{}),
					node("b", "sim-8c16g", types.NodeNotReady, simAlloc("sim-8c16g"), types.Resources{}),
					node("c", "sim-8c16g", types.NodeDeleting, simAlloc("sim-8c16g"), types.Resources{}),
				},
				Catalog: flatCatalog(),
			},
			wantSize: "sim-2c4g", wantNodes: 1, wantCost: 0.02,
		},
		{
			// Existing room first: three 3000m pods fill n1's 7800m only
			// twice; the third needs a new node.
			name: "existing room then new nodes",
			req: Request{
				Pending: pods("job", 3, 3000, gi),
				Existing: []types.NodeObservation{
					node("n1", "sim-8c16g", types.NodeReady, simAlloc("sim-8c16g"), types.Resources{}),
				},
				Catalog: flatCatalog(),
			},
			wantSize: "sim-4c8g", wantNodes: 1, wantCost: 0.04,
			wantOn: map[string]string{"app/job-0": "existing:n1", "app/job-1": "existing:n1", "app/job-2": "new:0"},
		},
		{
			name: "a GPU pod uses a free GPU on a node of the right model",
			req: Request{
				Pending: []types.PendingPod{gpuPod("infer", 1, "A10")},
				Existing: []types.NodeObservation{
					node("gpu-1", "sim-gpu-8c32g-1xa10", types.NodeReady, simAlloc("sim-gpu-8c32g-1xa10"), types.Resources{MilliCPU: 1000}),
				},
				Catalog: flatCatalog(),
			},
			wantOn: map[string]string{"app/infer": "existing:gpu-1"},
		},
		{
			name: "a node that reports no pod slots is not limited by them",
			req: Request{
				Pending: pods("tiny", 150, 10, types.MiB),
				Existing: []types.NodeObservation{
					node("n1", "", types.NodeReady, types.Resources{MilliCPU: 4000, Memory: 8 * gi}, types.Resources{}),
				},
				Catalog: flatCatalog(),
			},
			wantOn: map[string]string{"app/tiny-149": "existing:n1"},
		},
		{
			name:         "negative requests are reported, not planned",
			req:          Request{Pending: pods("bad", 1, -5, gi), Catalog: flatCatalog()},
			wantUnplaced: map[string]int{CodeInvalidRequest: 1},
			wantReason:   "must not be negative",
		},
		{
			name:         "empty catalog",
			req:          Request{Pending: pods("web", 1, 100, gi)},
			wantUnplaced: map[string]int{CodeNoFit: 1},
			wantReason:   "no usable size in the catalog",
		},
		{
			name: "unusable catalog entries are skipped",
			req: Request{
				Pending: pods("web", 1, 100, gi),
				Catalog: []types.InstanceType{
					{Name: "free-lunch", MilliCPU: 4000, Memory: 8 * gi, MaxPods: 110, HourlyPrice: math.NaN()},
					{Name: "all-overhead", MilliCPU: 1000, Memory: gi, MaxPods: 110, HourlyPrice: 0.01, Overhead: types.Resources{MilliCPU: 2000}},
					{Name: "ok", MilliCPU: 1000, Memory: 2 * gi, MaxPods: 110, HourlyPrice: 0.05},
					{Name: "ok", MilliCPU: 8000, Memory: 32 * gi, MaxPods: 110, HourlyPrice: 0.01},
				},
			},
			wantSize: "ok", wantNodes: 1, wantCost: 0.05,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanScaleUp(tc.req)
			if err := checkPlan(tc.req, nil, plan); err != nil {
				t.Fatal(err)
			}
			if plan.Size != tc.wantSize || plan.NewNodes != tc.wantNodes || math.Abs(plan.HourlyCost-tc.wantCost) > 1e-9 {
				t.Fatalf("got %s × %d at %v, want %s × %d at %v; alternatives %+v",
					plan.Size, plan.NewNodes, plan.HourlyCost, tc.wantSize, tc.wantNodes, tc.wantCost, plan.Alternatives)
			}
			codes := map[string]int{}
			for _, u := range plan.Unplaceable {
				codes[u.Code]++
			}
			if fmt.Sprint(codes) != fmt.Sprint(orEmpty(tc.wantUnplaced)) {
				t.Fatalf("unplaceable codes %v, want %v: %+v", codes, tc.wantUnplaced, plan.Unplaceable)
			}
			if tc.wantReason != "" && !strings.Contains(plan.Unplaceable[0].Reason, tc.wantReason) {
				t.Fatalf("reason %q does not say %q", plan.Unplaceable[0].Reason, tc.wantReason)
			}
			on := map[string]string{}
			for _, p := range plan.Placements {
				on[p.Pod] = p.Node
			}
			for pod, want := range tc.wantOn {
				if on[pod] != want {
					t.Errorf("pod %s on %q, want %q", pod, on[pod], want)
				}
			}
		})
	}
}

func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// Fragmentation, the case the seed's sum-and-divide gets wrong: three
// 5000m pods sum to 15000m, which one raw 16-core node "fits", but two of
// them never share an 8-core node and the seed picks the small size.
func TestPlanCountsFragmentationWhereBaselineDoesNot(t *testing.T) {
	req := Request{Pending: pods("batch", 3, 5000, types.GiB), Catalog: flatCatalog()[:3]}
	base := Baseline(req)
	if base.Size != "sim-8c16g" || base.NewNodes != 2 {
		t.Fatalf("baseline %s × %d, want the seed's sim-8c16g × 2", base.Size, base.NewNodes)
	}
	plan := PlanScaleUp(req)
	if plan.Size != "sim-8c16g" || plan.NewNodes != 3 {
		t.Fatalf("plan %s × %d, want sim-8c16g × 3 (one 5000m pod per 7800m node)", plan.Size, plan.NewNodes)
	}
	if err := checkPlan(req, nil, plan); err != nil {
		t.Fatal(err)
	}
}

// The plan is cheaper than the seed when the seed's smallest-that-fits is
// not the cheapest per unit of work.
func TestPlanBeatsBaselineOnPrice(t *testing.T) {
	catalog := []types.InstanceType{
		{Name: "small-pricey", MilliCPU: 4000, Memory: 16 * types.GiB, MaxPods: 110, HourlyPrice: 0.40},
		{Name: "big-cheap", MilliCPU: 16000, Memory: 64 * types.GiB, MaxPods: 110, HourlyPrice: 0.80},
	}
	req := Request{Pending: pods("web", 16, 1000, 2*types.GiB), Catalog: catalog}
	base, plan := Baseline(req), PlanScaleUp(req)
	if base.Size != "small-pricey" || base.HourlyCost != 1.60 {
		t.Fatalf("baseline %+v", base)
	}
	if plan.Size != "big-cheap" || plan.NewNodes != 1 || plan.HourlyCost != 0.80 {
		t.Fatalf("plan %s × %d at %v, want big-cheap × 1 at 0.80", plan.Size, plan.NewNodes, plan.HourlyCost)
	}
}

func TestPlanScaleUpExcludingFallsBackToNextSize(t *testing.T) {
	req := Request{Pending: pods("web", 10, 1000, types.GiB), Catalog: flatCatalog()}
	first := PlanScaleUp(req)
	if first.Size != "sim-8c16g" {
		t.Fatalf("first choice %s", first.Size)
	}
	second := PlanScaleUpExcluding(req, []string{first.Size, "no-such-size"})
	if second.Size != "sim-4c8g" || second.NewNodes != 4 {
		t.Fatalf("fallback %s × %d, want the runner-up sim-4c8g × 4", second.Size, second.NewNodes)
	}
	if err := checkPlan(req, []string{first.Size}, second); err != nil {
		t.Fatal(err)
	}
	last := second.Alternatives[len(second.Alternatives)-1]
	if last.Size != "sim-8c16g" || !strings.Contains(last.Skipped, "insufficient capacity") {
		t.Fatalf("excluded size not reported as skipped: %+v", last)
	}

	// A pod only the excluded size holds says so.
	big := Request{Pending: pods("cache", 1, 1000, 40*types.GiB), Catalog: flatCatalog()}
	plan := PlanScaleUpExcluding(big, []string{"sim-16c64g"})
	if len(plan.Unplaceable) != 1 || plan.Unplaceable[0].Code != CodeOutOfCapacity ||
		!strings.Contains(plan.Unplaceable[0].Reason, "sim-16c64g") {
		t.Fatalf("want out-of-capacity naming sim-16c64g, got %+v", plan.Unplaceable)
	}
}

func TestAlternativesAreInChoiceOrder(t *testing.T) {
	plan := PlanScaleUp(Request{Pending: pods("web", 10, 1000, types.GiB), Catalog: flatCatalog()})
	if len(plan.Alternatives) != len(flatCatalog()) {
		t.Fatalf("%d alternatives for %d sizes", len(plan.Alternatives), len(flatCatalog()))
	}
	if plan.Alternatives[0].Size != plan.Size {
		t.Fatalf("first alternative %s is not the chosen %s", plan.Alternatives[0].Size, plan.Size)
	}
	for i := 1; i < len(plan.Alternatives); i++ {
		if compareAlternatives(plan.Alternatives[i-1], plan.Alternatives[i]) > 0 {
			t.Fatalf("alternatives out of order at %d: %+v", i, plan.Alternatives)
		}
	}
}

func TestBaseline(t *testing.T) {
	gi := types.GiB
	tests := []struct {
		name      string
		req       Request
		wantSize  string
		wantNodes int
		wantLeft  int
	}{
		{"nothing pending", Request{Catalog: flatCatalog()}, "", 0, 0},
		// 10 × 1000m = 10000m over sim-2c4g's raw 2000m: 5 nodes; memory
		// 10Gi over 4Gi: 3. The seed takes the larger count.
		{"smallest size that fits the largest pod, count by the tighter sum", Request{Pending: pods("web", 10, 1000, gi), Catalog: flatCatalog()}, "sim-2c4g", 5, 0},
		{"memory can be the tighter sum", Request{Pending: pods("cache", 3, 100, 3*gi), Catalog: flatCatalog()}, "sim-2c4g", 3, 0},
		{"the largest pod picks the size", Request{Pending: concat(pods("web", 2, 100, gi), pods("big", 1, 6000, gi)), Catalog: flatCatalog()}, "sim-8c16g", 1, 0},
		{"no size fits: largest size, misfit reported", Request{Pending: concat(pods("web", 2, 1000, gi), pods("huge", 1, 40000, gi)), Catalog: flatCatalog()}, "sim-16c64g", 1, 1},
		{"GPU pods get a GPU size", Request{Pending: []types.PendingPod{gpuPod("a", 1, "A10"), gpuPod("b", 1, "A10")}, Catalog: flatCatalog()}, "sim-gpu-8c32g-1xa10", 2, 0},
		{"invalid pods are reported", Request{Pending: pods("bad", 2, -1, gi), Catalog: flatCatalog()}, "", 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := Baseline(tc.req)
			if b.Size != tc.wantSize || b.NewNodes != tc.wantNodes || len(b.Unplaceable) != tc.wantLeft {
				t.Fatalf("got %s × %d with %d unplaceable, want %s × %d with %d", b.Size, b.NewNodes, len(b.Unplaceable), tc.wantSize, tc.wantNodes, tc.wantLeft)
			}
			if want := float64(b.NewNodes) * priceOf(tc.req.Catalog, b.Size); b.HourlyCost != want {
				t.Fatalf("cost %v, want %v", b.HourlyCost, want)
			}
		})
	}
}

func priceOf(catalog []types.InstanceType, name string) float64 {
	t, _ := catalogEntry(catalog, name)
	return t.HourlyPrice
}

// linearCatalog prices three sizes at one rate per vCPU and GiB, and a
// fourth (big memory) above it.
func linearCatalog() []types.InstanceType {
	gi := types.GiB
	return []types.InstanceType{
		{Name: "s2", MilliCPU: 2000, Memory: 4 * gi, MaxPods: 110, HourlyPrice: 0.02},
		{Name: "s4", MilliCPU: 4000, Memory: 8 * gi, MaxPods: 110, HourlyPrice: 0.04},
		{Name: "s8", MilliCPU: 8000, Memory: 16 * gi, MaxPods: 110, HourlyPrice: 0.08},
		{Name: "m16", MilliCPU: 16000, Memory: 64 * gi, MaxPods: 110, HourlyPrice: 0.20},
	}
}

func TestFewerNodesBuysTheSameRateSizeOnFewestNodes(t *testing.T) {
	batch := pods("web", 3, 1500, 3*types.GiB) // one per s2, three on one s8
	req := Request{Pending: batch, Catalog: linearCatalog()}
	if p := PlanScaleUp(req); p.Size != "s2" || p.NewNodes != 3 {
		t.Fatalf("default: %d × %s, want the cheapest plan 3 × s2", p.NewNodes, p.Size)
	}
	req.FewerNodes = true
	p := PlanScaleUp(req)
	if p.Size != "s8" || p.NewNodes != 1 || len(p.Unplaceable) != 0 {
		t.Fatalf("FewerNodes: %d × %s (unplaced %v), want 1 × s8", p.NewNodes, p.Size, p.Unplaceable)
	}
	if p.Alternatives[0].Size != "s8" || !sameCost(p.HourlyCost, 0.08) {
		t.Errorf("alternatives %v cost %v: the chosen size should come first at its own cost", p.Alternatives, p.HourlyCost)
	}
	for _, pl := range p.Placements {
		if pl.Node != NewNodePrefix+"0" {
			t.Errorf("placement %v, want every pod on new:0", pl)
		}
	}
}

func TestFewerNodesKeepsTheCheapestWhenRatesDiffer(t *testing.T) {
	// Only m16 holds the batch on one node, at a higher rate: no change.
	all := linearCatalog()
	cat := []types.InstanceType{all[0], all[3]}
	req := Request{Pending: pods("web", 3, 1500, 3*types.GiB), Catalog: cat, FewerNodes: true}
	if p := PlanScaleUp(req); p.Size != "s2" || p.NewNodes != 3 {
		t.Fatalf("FewerNodes with no same-rate size: %d × %s, want 3 × s2", p.NewNodes, p.Size)
	}
	// One node already: nothing to save.
	req = Request{Pending: pods("one", 1, 1500, 3*types.GiB), Catalog: linearCatalog(), FewerNodes: true}
	if p := PlanScaleUp(req); p.Size != "s2" || p.NewNodes != 1 {
		t.Fatalf("FewerNodes for one pod: %d × %s, want 1 × s2", p.NewNodes, p.Size)
	}
}

func TestNodesObjectiveBuysTheFewestNodesThenTheCheapest(t *testing.T) {
	// Only m16 holds the batch on one node, at a higher rate: the nodes
	// objective pays it, the cost objective does not.
	all := linearCatalog()
	cat := []types.InstanceType{all[0], all[3]}
	batch := pods("web", 3, 1500, 3*types.GiB)
	if p := PlanScaleUp(Request{Pending: batch, Catalog: cat, FewerNodes: true, Objective: types.SizingCost}); p.Size != "s2" || p.NewNodes != 3 {
		t.Fatalf("cost objective: %d × %s, want 3 × s2", p.NewNodes, p.Size)
	}
	p := PlanScaleUp(Request{Pending: batch, Catalog: cat, Objective: types.SizingNodes})
	if p.Size != "m16" || p.NewNodes != 1 || len(p.Unplaceable) != 0 || p.Alternatives[0].Size != "m16" {
		t.Fatalf("nodes objective: %d × %s (unplaced %v, alternatives %v), want 1 × m16", p.NewNodes, p.Size, p.Unplaceable, p.Alternatives)
	}
	// At one node each, the cheaper size wins.
	if p := PlanScaleUp(Request{Pending: pods("one", 1, 1500, 3*types.GiB), Catalog: linearCatalog(), Objective: types.SizingNodes}); p.Size != "s2" || p.NewNodes != 1 {
		t.Fatalf("nodes objective for one pod: %d × %s, want 1 × s2", p.NewNodes, p.Size)
	}
	// Placing more pods still comes first: a size that leaves pods out
	// loses to one that holds them all on more nodes.
	big := append(pods("big", 1, 12000, 40*types.GiB), batch...)
	p = PlanScaleUp(Request{Pending: big, Catalog: []types.InstanceType{all[2], all[3]}, Objective: types.SizingNodes})
	if p.Size != "m16" || len(p.Unplaceable) != 0 {
		t.Fatalf("nodes objective with a pod only m16 holds: %d × %s (unplaced %v), want m16 for all", p.NewNodes, p.Size, p.Unplaceable)
	}
}

// The nodes objective packs every size exactly on inputs big enough for
// the cost bounds to prune sizes (their pruning says nothing of nodes).
func TestNodesObjectiveIsNotPrunedByCostBounds(t *testing.T) {
	defer func(was int) { pruneAbove = was }(pruneAbove)
	pruneAbove = 0 // bound every size, as on a big input
	all := linearCatalog()
	cat := []types.InstanceType{all[0], all[3]}
	batch := pods("web", 3, 1500, 3*types.GiB)
	cost := PlanScaleUp(Request{Pending: batch, Catalog: cat})
	if cost.Size != "s2" || !slices.ContainsFunc(cost.Alternatives, func(a Alternative) bool { return a.Size == "m16" && a.Estimated }) {
		t.Fatalf("cost objective: %d × %s, alternatives %v: want s2, m16 only bounded (else this test shows nothing)", cost.NewNodes, cost.Size, cost.Alternatives)
	}
	p := PlanScaleUp(Request{Pending: batch, Catalog: cat, Objective: types.SizingNodes})
	if p.Size != "m16" || p.NewNodes != 1 {
		t.Fatalf("nodes objective with bounds: %d × %s (alternatives %v), want 1 × m16", p.NewNodes, p.Size, p.Alternatives)
	}
	for _, a := range p.Alternatives {
		if a.Estimated {
			t.Errorf("alternative %s was estimated from a cost bound, not packed", a.Size)
		}
	}
}
