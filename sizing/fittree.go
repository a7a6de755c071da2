package sizing

import (
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// fitTree answers "which is the first slot with room for this request?" in
// about log n steps instead of a scan: a segment tree over slots whose
// inner entries hold the per-dimension maximum free room below them. A
// subtree whose maxima do not cover the request cannot hold it and is
// skipped; maxima can come from different slots, so a subtree that passes
// may still hold nothing and the search backs out of it, which stays rare
// in practice.
type fitTree struct {
	leaves int               // a power of two
	max    []types.Resources // max[1] is the root; leaf i is max[leaves+i]
}

// emptySlot fits no request: every request takes at least one pod slot.
var emptySlot = types.Resources{MilliCPU: -1, Memory: -1, GPUs: -1, Pods: -1, EphemeralStorage: -1}

// reset empties the tree, keeping room for about n slots.
func (t *fitTree) reset(n int) {
	t.leaves = 1
	for t.leaves < n {
		t.leaves *= 2
	}
	t.max = t.max[:0]
	for range 2 * t.leaves {
		t.max = append(t.max, emptySlot)
	}
}

// set gives slot i free room free (emptySlot to clear it), growing the tree
// when i is past its end.
func (t *fitTree) set(i int, free types.Resources) {
	if i >= t.leaves {
		t.grow(i + 1)
	}
	n := t.leaves + i
	t.max[n] = free
	for n > 1 {
		n /= 2
		t.max[n] = t.max[2*n].Max(t.max[2*n+1])
	}
}

// grow doubles the leaves until slot n-1 exists, keeping every slot and
// reusing the buffer's capacity.
func (t *fitTree) grow(n int) {
	old := t.leaves
	for t.leaves < n {
		t.leaves *= 2
	}
	t.max = slices.Grow(t.max[:2*old], 2*(t.leaves-old))[:2*t.leaves]
	copy(t.max[t.leaves:], t.max[old:2*old]) // no overlap: leaves >= 2*old
	for i := t.leaves + old; i < 2*t.leaves; i++ {
		t.max[i] = emptySlot
	}
	for i := t.leaves - 1; i >= 1; i-- {
		t.max[i] = t.max[2*i].Max(t.max[2*i+1])
	}
}

// free is slot i's free room.
func (t *fitTree) free(i int) types.Resources { return t.max[t.leaves+i] }

// first returns the lowest slot whose free room fits req, or -1.
func (t *fitTree) first(req types.Resources) int { return t.firstFrom(0, req) }

// firstFrom returns the lowest slot at or after lo whose free room fits
// req, or -1.
func (t *fitTree) firstFrom(lo int, req types.Resources) int {
	return t.search(1, 0, t.leaves, lo, req)
}

// search looks in node n, which covers slots [from, to).
func (t *fitTree) search(n, from, to, lo int, req types.Resources) int {
	if to <= lo || !req.Fits(t.max[n]) {
		return -1
	}
	if n >= t.leaves {
		return n - t.leaves
	}
	mid := (from + to) / 2
	if i := t.search(2*n, from, mid, lo, req); i >= 0 {
		return i
	}
	return t.search(2*n+1, mid, to, lo, req)
}
