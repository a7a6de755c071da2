package sizing

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// lookAheadCatalog is linearCatalog with the sim's per-node overhead: an
// s8 holds one 4-CPU pod, not two, so three 4-CPU pods alone pack
// cheapest on one m16 (0.20 against three s8 at 0.24), though m16 costs
// more per vCPU.
func lookAheadCatalog() []types.InstanceType {
	out := linearCatalog()
	for i := range out {
		out[i].Overhead = types.Resources{MilliCPU: 200, Memory: 512 * types.MiB, Pods: 1}
	}
	return out
}

// mix is the demand a pool of web pods runs: many small pods besides the
// large ones.
func mix() []types.PendingPod {
	return []types.PendingPod{
		{Namespace: "visor:expected", Name: "a", Requests: types.Resources{MilliCPU: 500, Memory: types.GiB, Pods: 1}, Count: 40},
		{Namespace: "visor:expected", Name: "b", Requests: types.Resources{MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1}, Count: 20},
		{Namespace: "visor:expected", Name: "c", Requests: types.Resources{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 1}, Count: 5},
	}
}

func TestLookAheadSizesForTheDemandThePoolRuns(t *testing.T) {
	batch := pods("big", 3, 4000, 8*types.GiB)
	cases := []struct {
		name     string
		req      Request
		size     string
		newNodes int
	}{
		{"the batch alone buys the dearer size", Request{Pending: batch, Catalog: lookAheadCatalog(), FewerNodes: true}, "m16", 1},
		{"with the mix, the size cheapest per unit", Request{Pending: batch, Catalog: lookAheadCatalog(), FewerNodes: true, Expected: mix()}, "s8", 3},
		{"never a larger size than the batch's own", Request{Pending: pods("small", 2, 500, types.GiB), Catalog: lookAheadCatalog(), FewerNodes: true,
			Expected: []types.PendingPod{{Namespace: "visor:expected", Name: "x", Requests: types.Resources{MilliCPU: 12000, Memory: 40 * types.GiB, Pods: 1}, Count: 4}}}, "s2", 1},
		{"the expected pods buy nothing when none is pending", Request{Catalog: lookAheadCatalog(), Expected: mix()}, "", 0},
		{"a size that leaves a pending pod out is not chosen", Request{Pending: concat(batch, pods("huge", 1, 12000, 40*types.GiB)), Catalog: lookAheadCatalog(), FewerNodes: true, Expected: mix()}, "m16", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanScaleUp(tc.req)
			if p.Size != tc.size || p.NewNodes != tc.newNodes {
				t.Fatalf("%d × %q, want %d × %q (unplaced %v)", p.NewNodes, p.Size, tc.newNodes, tc.size, p.Unplaceable)
			}
			for _, pl := range p.Placements {
				if strings.HasPrefix(pl.Pod, "visor:expected/") {
					t.Fatalf("an expected pod was placed: %v", pl)
				}
			}
			if p.Size != "" && (len(p.Alternatives) == 0 || p.Alternatives[0].Size != p.Size) {
				t.Errorf("alternatives %v: the chosen size should come first", p.Alternatives)
			}
		})
	}
}

func TestLookAheadKeepsThePlanWhenTheSizeWouldStrandAPod(t *testing.T) {
	// A pod only m16 holds: s8 would leave it out, so the plan stays.
	req := Request{Pending: concat(pods("big", 2, 4000, 8*types.GiB), pods("mem", 1, 2000, 30*types.GiB)), Catalog: lookAheadCatalog(), FewerNodes: true, Expected: mix()}
	p := PlanScaleUp(req)
	if p.Size != "m16" || len(p.Unplaceable) != 0 {
		t.Fatalf("%d × %s, unplaced %v; want m16 placing every pod", p.NewNodes, p.Size, p.Unplaceable)
	}
}
