package sizing

import (
	"math"
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// fill puts perNode pods of one shape on each of nodes consecutive nodes
// starting at node (an index into input.existing, or a new node's index).
type fill struct {
	shape   int32
	node    int
	nodes   int
	perNode int64
}

// fillExisting places pods on free room of existing nodes, shapes in
// canonical (largest first) order, each pod on the first node by name with
// room. It returns how many pods of each shape are still to place.
func (in *input) fillExisting() (remaining []int64, fills []fill) {
	remaining = make([]int64, len(in.shapes))
	for s, sh := range in.shapes {
		r := sh.count()
		for i := range in.existing {
			if r == 0 {
				break
			}
			n := &in.existing[i]
			if !admits(sh, n.gpus, n.model) {
				continue
			}
			if k := min(fitCount(n.free, sh.req), r); k > 0 {
				n.free = n.free.Sub(times(sh.req, k))
				fills = append(fills, fill{shape: int32(s), node: i, nodes: 1, perNode: k})
				r -= k
			}
		}
		remaining[s] = r
	}
	return remaining, fills
}

// group is a run of new nodes, opened consecutively, that hold the same
// pods and so have the same free room. First fit over identical nodes
// fills them in order, so a run only ever splits at one point.
type group struct {
	free  types.Resources
	first int
	n     int
}

// outcome is what packing the remaining pods onto one size gives.
type outcome struct {
	nodes   int
	placed  int64
	unfit   int64 // pods this size cannot hold at all
	ceiling int64 // pods that fit but were cut by the node limit
}

// packer packs onto new nodes of one size at a time; its buffers are
// reused across sizes so planning allocates per size, not per pod.
type packer struct {
	order        []int32
	share        []float64
	suffixMin    []types.Resources
	groups, next []group
	record       bool
	fills        []fill
}

// pack is first-fit decreasing of the remaining pods onto new nodes of z,
// at most limit nodes (0: unlimited, negative: none). Shapes go largest
// first by their dominant share of this size's allocatable room (the
// multi-dimensional "decreasing"), ties in canonical order. With p.record
// set it also records the fills for the placements.
func (p *packer) pack(in *input, remaining []int64, z size, limit int) outcome {
	var out outcome
	p.order = p.order[:0]
	p.share = slices.Grow(p.share[:0], len(in.shapes))[:len(in.shapes)]
	for s, sh := range in.shapes {
		if remaining[s] == 0 {
			continue
		}
		if z.holds(sh) == 0 {
			out.unfit += remaining[s]
			continue
		}
		p.order = append(p.order, int32(s))
		p.share[s] = dominantShare(sh.req, z.alloc)
	}
	slices.SortFunc(p.order, func(a, b int32) int {
		if p.share[a] != p.share[b] {
			if p.share[a] > p.share[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	p.computeSuffixMin(in)
	p.groups, p.fills = p.groups[:0], p.fills[:0]
	for pos, s := range p.order {
		req := in.shapes[s].req
		alive := p.suffixMin[pos+1]
		r := p.firstFit(s, req, remaining[s], alive)
		if r == 0 {
			continue
		}
		// Open new nodes for what is left, within the limit.
		perNode := min(z.holds(in.shapes[s]), r)
		allowed := int64(0)
		switch {
		case limit == 0:
			allowed = math.MaxInt64
		case limit > 0:
			allowed = int64(max(limit-out.nodes, 0))
		}
		full := min(r/perNode, allowed)
		if full > 0 {
			p.open(s, z.alloc.Sub(times(req, perNode)), out.nodes, int(full), perNode, alive)
			out.nodes += int(full)
			r -= full * perNode
		}
		if r > 0 && r < perNode && allowed > full {
			p.open(s, z.alloc.Sub(times(req, r)), out.nodes, 1, r, alive)
			out.nodes++
			r = 0
		}
		out.ceiling += r
	}
	for _, s := range p.order {
		out.placed += remaining[s]
	}
	out.placed -= out.ceiling
	return out
}

// firstFit puts up to r pods of shape s on the open groups, first node
// first, and returns how many are left. Groups that no later shape can use
// are dropped as it goes, which keeps the scan short.
func (p *packer) firstFit(s int32, req types.Resources, r int64, alive types.Resources) int64 {
	p.next = p.next[:0]
	for _, g := range p.groups {
		k := int64(0)
		if r > 0 {
			k = min(fitCount(g.free, req), r)
		}
		if k == 0 {
			p.keep(g, alive)
			continue
		}
		if r >= k*int64(g.n) { // every node of the group takes k
			p.note(s, g.first, g.n, k)
			r -= k * int64(g.n)
			g.free = g.free.Sub(times(req, k))
			p.keep(g, alive)
			continue
		}
		// The group splits: full nodes take k, one node the rest, the
		// others stay as they were.
		full := int(r / k)
		rest := r % k
		if full > 0 {
			p.note(s, g.first, full, k)
			p.keep(group{free: g.free.Sub(times(req, k)), first: g.first, n: full}, alive)
		}
		untouched := g.n - full
		if rest > 0 {
			p.note(s, g.first+full, 1, rest)
			p.keep(group{free: g.free.Sub(times(req, rest)), first: g.first + full, n: 1}, alive)
			untouched--
		}
		if untouched > 0 {
			p.keep(group{free: g.free, first: g.first + g.n - untouched, n: untouched}, alive)
		}
		r = 0
	}
	p.groups, p.next = p.next, p.groups
	return r
}

// open adds n new nodes holding perNode pods of shape s each, after every
// open group.
func (p *packer) open(s int32, free types.Resources, first, n int, perNode int64, alive types.Resources) {
	p.note(s, first, n, perNode)
	if alive.Fits(free) {
		p.groups = append(p.groups, group{free: free, first: first, n: n})
	}
}

// keep appends g to the next round's groups if some later shape could
// still fit in it (every dimension at least the later shapes' minimum).
func (p *packer) keep(g group, alive types.Resources) {
	if alive.Fits(g.free) {
		p.next = append(p.next, g)
	}
}

func (p *packer) note(s int32, first, n int, perNode int64) {
	if p.record {
		p.fills = append(p.fills, fill{shape: s, node: first, nodes: n, perNode: perNode})
	}
}

// computeSuffixMin sets suffixMin[i] to the per-dimension minimum request
// of the shapes at order positions i and later; past the end nothing is
// alive.
func (p *packer) computeSuffixMin(in *input) {
	n := len(p.order)
	p.suffixMin = slices.Grow(p.suffixMin[:0], n+1)[:n+1]
	m := types.Resources{MilliCPU: math.MaxInt64, Memory: math.MaxInt64, GPUs: math.MaxInt64, Pods: math.MaxInt64}
	p.suffixMin[n] = m
	for i := n - 1; i >= 0; i-- {
		r := in.shapes[p.order[i]].req
		m = types.Resources{
			MilliCPU: min(m.MilliCPU, r.MilliCPU), Memory: min(m.Memory, r.Memory),
			GPUs: min(m.GPUs, r.GPUs), Pods: min(m.Pods, r.Pods),
		}
		p.suffixMin[i] = m
	}
}

// dominantShare is the largest fraction of one node's room the request
// takes in any dimension.
func dominantShare(req, alloc types.Resources) float64 {
	share := 0.0
	for _, d := range [4][2]int64{
		{req.MilliCPU, alloc.MilliCPU}, {req.Memory, alloc.Memory},
		{req.GPUs, alloc.GPUs}, {req.Pods, alloc.Pods},
	} {
		if d[0] > 0 && d[1] > 0 {
			share = max(share, float64(d[0])/float64(d[1]))
		}
	}
	return share
}
