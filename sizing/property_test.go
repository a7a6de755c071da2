package sizing

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

const propertyRuns = 1500

// Every plan on random input keeps its promises (checkPlan: each placed pod
// fits its node, recomputed from the placements; every pod accounted for
// once; nothing left out that still fits), is the same for any input
// order, and its packing agrees, size by size, with the one-pod-at-a-time
// reference first-fit decreasing.
func TestPlanPropertiesOnRandomRequests(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := range propertyRuns {
		req := randomRequest(r)
		plan := PlanScaleUp(req)
		if err := checkPlan(req, nil, plan); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if again := PlanScaleUp(shuffled(r, req)); !reflect.DeepEqual(plan, again) {
			t.Fatalf("run %d: plan depends on input order:\n%+v\n%+v", run, plan, again)
		}
		for _, alt := range plan.Alternatives {
			if alt.Skipped != "" {
				continue
			}
			size, _ := catalogEntry(req.Catalog, alt.Size)
			nodes, left := referencePack(req, size, req.MaxNewNodes)
			if nodes != alt.NewNodes || left != alt.Left {
				t.Fatalf("run %d: size %s: planner %d nodes / %d left, reference FFD %d / %d",
					run, alt.Size, alt.NewNodes, alt.Left, nodes, left)
			}
		}
	}
}

// The cost property, stated exactly.
//
// The seed's Baseline sums requests against raw capacity, so its count can
// be too small to hold the pods once per-node overhead and fragmentation
// are counted: comparing against it as-is would reward a plan for
// buying less than the pods need. So the comparison is against the
// baseline made valid: keep Baseline's size S and grow its count k from
// Baseline.NewNodes until S's nodes (after the same free room on existing
// nodes) hold every pod that any allowed size can hold, checked with the
// reference first-fit decreasing packer. When S cannot hold such a pod at
// any count (the seed ignores overhead when it picks S), no valid baseline
// of that size exists and the case is counted, not compared.
//
// Property: PlanScaleUp(req).HourlyCost <= k × price(S). In particular,
// when the raw Baseline is already valid (k == Baseline.NewNodes),
// PlanScaleUp never costs more than Baseline.
//
// It holds by construction, which is the point of testing it: the planner
// considers S too, first-fit decreasing with a node limit behaves exactly
// like the unlimited run until that run needs one node more, so S's own
// first-fit count is at most k, and the planner keeps the cheapest of the
// sizes that leave the fewest pods out. The test fails if the selection
// ever drops a cheaper valid size or miscounts one. Validity is "our
// first-fit fits them", a sufficient test; an optimal packer might fit the
// pods in fewer nodes, which would only make the valid baseline cheaper
// than the one compared here.
func TestPlanNeverCostsMoreThanValidBaseline(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var compared, rawValid, madeValid, noValid int
	for run := range propertyRuns {
		req := randomRequest(r)
		req.MaxNewNodes = 0
		base := Baseline(req)
		plan := PlanScaleUp(req)
		if base.Size == "" {
			continue
		}
		size, _ := catalogEntry(req.Catalog, base.Size)
		fewestLeft := len(req.Pending)
		for _, alt := range plan.Alternatives {
			if alt.Skipped == "" {
				fewestLeft = min(fewestLeft, alt.Left)
			}
		}
		if _, left := referencePack(req, size, 0); left > fewestLeft {
			noValid++
			continue
		}
		// Holding everything with k nodes implies holding it with k+1
		// (first fit never reaches the extra node), so search for k.
		holdsAll := func(k int) bool {
			_, left := referencePack(req, size, k)
			return k > 0 && left == fewestLeft
		}
		k := base.NewNodes
		if !holdsAll(k) {
			lo, hi := k, k+len(req.Pending) // lo fails, hi holds: one node per pod
			for hi-lo > 1 {
				if mid := lo + (hi-lo)/2; holdsAll(mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			k = hi
		}
		if k == base.NewNodes {
			rawValid++
		} else {
			madeValid++
		}
		compared++
		if limit := float64(k) * size.HourlyPrice; plan.HourlyCost > limit*(1+1e-9) {
			t.Fatalf("run %d: plan %s×%d costs %v, more than the valid baseline %s×%d at %v (raw baseline %d nodes)",
				run, plan.Size, plan.NewNodes, plan.HourlyCost, base.Size, k, limit, base.NewNodes)
		}
	}
	t.Logf("compared %d (baseline valid as is %d, grown to be valid %d), no valid baseline of the seed's size %d",
		compared, rawValid, madeValid, noValid)
	if rawValid == 0 || madeValid == 0 || compared < propertyRuns/3 {
		t.Fatalf("property barely exercised: compared %d, raw-valid %d, made-valid %d", compared, rawValid, madeValid)
	}
}

// Existing room is used before buying, and a booting node's room counts so
// the same pods are not bought for twice.
func TestPropertyExistingRoomIsUsedFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for run := range 300 {
		req := randomRequest(r)
		plan := PlanScaleUp(req)
		usable := eligibleForCheck(req)
		for _, pl := range plan.Placements {
			if len(pl.Node) > len(ExistingNodePrefix) && pl.Node[:len(ExistingNodePrefix)] == ExistingNodePrefix {
				if usable[pl.Node[len(ExistingNodePrefix):]] == nil {
					t.Fatalf("run %d: pod on ineligible node %s", run, pl.Node)
				}
			}
		}
		// Dropping the existing nodes can only cost as much or more.
		bare := req
		bare.Existing = nil
		if without := PlanScaleUp(bare); len(usable) > 0 && len(without.Unplaceable) < len(plan.Unplaceable) {
			t.Fatalf("run %d: existing room left more pods out (%d) than none (%d)", run, len(plan.Unplaceable), len(without.Unplaceable))
		}
	}
}

var _ = types.NodeReady
