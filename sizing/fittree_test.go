package sizing

import (
	"math/rand/v2"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// The tree's answer is always the linear scan's: the lowest slot that
// fits, across growth from a tiny tree to thousands of slots.
func TestFitTreeFindsTheFirstSlotThatFits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var tree fitTree
	for round := range 20 {
		tree.reset(1 + r.IntN(4))
		slots := []types.Resources{}
		for step := range 3000 {
			i := r.IntN(len(slots) + 2)
			free := types.Resources{MilliCPU: r.Int64N(8000), Memory: r.Int64N(32) * types.GiB, GPUs: r.Int64N(2), Pods: r.Int64N(5)}
			if r.IntN(5) == 0 {
				free = emptySlot
			}
			for len(slots) <= i {
				slots = append(slots, emptySlot)
			}
			slots[i] = free
			tree.set(i, free)

			req := types.Resources{MilliCPU: r.Int64N(8000), Memory: r.Int64N(32) * types.GiB, GPUs: r.Int64N(2), Pods: 1}
			want := -1
			for j, s := range slots {
				if req.Fits(s) {
					want = j
					break
				}
			}
			if got := tree.first(req); got != want {
				t.Fatalf("round %d step %d: first(%s) = %d, linear scan says %d", round, step, req, got, want)
			}
		}
	}
}
