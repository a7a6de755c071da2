package sizing

import (
	"cmp"
	"slices"
)

// pruneAbove is the work (usable sizes × shapes) above which sizes that
// cannot win are bounded instead of packed. Below it every alternative is
// exact, which is what people read in a plan's Alternatives; above it
// (hundreds of sizes, thousands of distinct pods) packing every size would
// dominate the decision.
var pruneAbove = 200_000 // a variable so tests can compare against exhaustive packing

// bound is a lower bound on packing the remaining pods onto one size.
type bound struct {
	unfit int64 // pods the size can never hold: exact
	nodes int64 // no packing needs fewer nodes
	count int64 // pods to place
}

// boundOf: the pods a size holds need at least their summed requests in
// nodes on every dimension, at least count/cap nodes for a capped shape,
// and their own nodes for isolated shapes.
func (in *input) boundOf(remaining []int64, z size) bound {
	var b bound
	var sum [5]int64
	var isolated int64
	for s := range in.shapes {
		sh := &in.shapes[s]
		r := remaining[s]
		if r == 0 {
			continue
		}
		b.count += r
		most := in.holds(&z, sh)
		if most == 0 {
			b.unfit += r
			continue
		}
		need := ceilDiv(r, most)
		b.nodes = max(b.nodes, need)
		if sh.isolated {
			isolated = addSat(isolated, need)
		}
		for d, v := range [5]int64{sh.req.MilliCPU, sh.req.Memory, sh.req.GPUs, sh.req.Pods, sh.req.EphemeralStorage} {
			sum[d] = addSat(sum[d], mulSat(v, r))
		}
	}
	b.nodes = max(b.nodes, isolated)
	for d, a := range [5]int64{z.alloc.MilliCPU, z.alloc.Memory, z.alloc.GPUs, z.alloc.Pods, z.alloc.EphemeralStorage} {
		if sum[d] > 0 && a > 0 {
			b.nodes = max(b.nodes, ceilDiv(sum[d], a))
		}
	}
	if in.limit > 0 {
		b.nodes = min(b.nodes, int64(in.limit))
	}
	return b
}

// loses reports whether a size with this bound is sure to rank after best:
// it leaves more pods out, or as many (then it places all it can hold, so
// it needs at least b.nodes) at a cost above best's.
func (b bound) loses(best Alternative, price float64) bool {
	if b.unfit != int64(best.Left) {
		return b.unfit > int64(best.Left)
	}
	cost := float64(b.nodes) * price
	return cost > best.HourlyCost && !sameCost(cost, best.HourlyCost)
}

func (b bound) alternative(z size) Alternative {
	return Alternative{Size: z.t.Name, NewNodes: int(b.nodes), HourlyCost: float64(b.nodes) * z.t.HourlyPrice,
		Placed: int(b.count - b.unfit), Left: int(b.unfit), Estimated: true}
}

// packOrder is the order sizes are packed in: catalog order on small
// inputs (bounds nil), else by bound, most promising first.
func (in *input) packOrder(remaining []int64) ([]int, []bound) {
	order := make([]int, len(in.sizes))
	for i := range order {
		order[i] = i
	}
	if len(in.sizes)*len(in.shapes) <= pruneAbove {
		return order, nil
	}
	bounds := make([]bound, len(in.sizes))
	for i, z := range in.sizes {
		bounds[i] = in.boundOf(remaining, z)
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(bounds[a].unfit, bounds[b].unfit),
			cmp.Compare(float64(bounds[a].nodes)*in.sizes[a].t.HourlyPrice, float64(bounds[b].nodes)*in.sizes[b].t.HourlyPrice),
			cmp.Compare(a, b))
	})
	return order, bounds
}
