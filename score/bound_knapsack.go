package score

import (
	"cmp"
	"math"
	"slices"
)

// The pricing problem of the column generation: which pods, at most
// limit[i] of shape i, one node of a size holds that are worth most at
// the duals' prices. A multi-dimensional integer knapsack over CPU,
// memory, GPU devices, pod slots and ephemeral storage, solved by depth-
// first branch and bound. When it runs out of nodes it still returns a
// bound no pattern can beat, so the column generation's Farley bound
// stays a proof.

// knapDims are the dimensions a node offers: CPU, memory, GPUs (whole
// devices: a pod's GPUs each take one device, so a count is the
// constraint), pod slots, ephemeral storage.
const knapDims = 5

type knapItem struct {
	shape int
	value float64
	need  [knapDims]float64
	limit int
}

type knapsack struct {
	items []knapItem
	room  [knapDims]float64
	// ratio[k][d] is the best value per unit of d over items k and after
	// (+Inf when one of them needs none of d); countUB[k] the value of
	// taking every one of them.
	ratio   [][knapDims]float64
	countUB []float64

	cur, bestTake []int
	best, openUB  float64
	nodes, budget int
}

// knapResult is the best pattern found (take[i] pods of items' shape i),
// its value, and a value no pattern exceeds.
type knapResult struct {
	value, upper float64
	take         map[int]int // shape → count
}

// solveKnapsack packs items into room, exploring at most budget nodes.
func solveKnapsack(items []knapItem, room [knapDims]float64, budget int) knapResult {
	// Densest first: value per share of the room, summed over dimensions.
	density := func(it knapItem) float64 {
		s := 0.0
		for d := range knapDims {
			if room[d] > 0 {
				s += it.need[d] / room[d]
			}
		}
		return it.value / max(s, 1e-12)
	}
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b knapItem) int { return cmp.Compare(density(b), density(a)) })
	k := &knapsack{items: items, room: room, budget: budget, cur: make([]int, len(items))}
	k.ratio = make([][knapDims]float64, len(items)+1)
	k.countUB = make([]float64, len(items)+1)
	for i := len(items) - 1; i >= 0; i-- {
		k.ratio[i] = k.ratio[i+1]
		for d := range knapDims {
			r := math.Inf(1)
			if items[i].need[d] > 0 {
				r = items[i].value / items[i].need[d]
			}
			k.ratio[i][d] = max(k.ratio[i][d], r)
		}
		k.countUB[i] = k.countUB[i+1] + items[i].value*float64(items[i].limit)
	}
	k.search(0, 0, room)
	res := knapResult{value: k.best, upper: max(k.best*(1+1e-9)+1e-12, k.openUB), take: map[int]int{}}
	for i, n := range k.bestTake {
		if n > 0 {
			res.take[items[i].shape] = n
		}
	}
	return res
}

// bound is the most items i.. can add in rem: the least of every
// dimension's best-ratio bound and the take-them-all bound.
func (k *knapsack) bound(i int, rem [knapDims]float64) float64 {
	b := k.countUB[i]
	for d := range knapDims {
		if r := k.ratio[i][d]; !math.IsInf(r, 1) {
			b = min(b, r*rem[d])
		}
	}
	return b
}

func (k *knapsack) search(i int, value float64, rem [knapDims]float64) {
	if value > k.best {
		k.best = value
		k.bestTake = slices.Clone(k.cur)
	}
	if i == len(k.items) {
		return
	}
	ub := value + k.bound(i, rem)
	if ub <= k.best*(1+1e-12) {
		return
	}
	if k.nodes >= k.budget {
		k.openUB = max(k.openUB, ub)
		return
	}
	k.nodes++
	it := k.items[i]
	most := it.limit
	for d := range knapDims {
		if it.need[d] > 0 {
			most = min(most, int(math.Floor(rem[d]/it.need[d]+1e-9)))
		}
	}
	for n := most; n >= 0; n-- {
		next := rem
		for d := range knapDims {
			next[d] -= float64(n) * it.need[d]
		}
		k.cur[i] = n
		k.search(i+1, value+float64(n)*it.value, next)
	}
	k.cur[i] = 0
}
