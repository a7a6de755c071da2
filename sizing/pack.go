package sizing

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

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
			if !admits(&sh, n.gpus, n.model) || n.closed || (sh.isolated && n.used) || (n.ruled && (sh.cap > 0 || sh.isolated)) || !in.existingAdmits(sh.filter, i) ||
				!sh.takesZone(n.node.named.Labels[corev1.LabelTopologyZone]) {
				continue
			}
			k := min(fitCount(n.free, sh.req), r)
			if sh.cap > 0 {
				k = min(k, sh.cap)
			}
			if k > 0 {
				n.free = n.free.Sub(times(sh.req, k))
				n.used, n.closed = true, sh.isolated
				fills = append(fills, fill{shape: int32(s), node: i, nodes: 1, perNode: k})
				r -= k
			}
		}
		remaining[s] = r
	}
	return remaining, fills
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
//
// New nodes are kept as runs: nodes opened together with the same pods
// have the same free room, and first fit over identical nodes fills them in
// order, so a run only ever splits at one point. A run is known by its
// first node's index, which is its slot in the fitTree (holding the run's
// free room); runLen[first] is how many nodes it has.
type packer struct {
	order  []int32
	share  []float64
	most   []int64 // per shape: pods one new node takes (input.holds)
	runs   fitTree
	runLen []int // per node index: nodes in the run starting there, else 0
	record bool
	fills  []fill
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
	p.most = slices.Grow(p.most[:0], len(in.shapes))[:len(in.shapes)]
	for s, sh := range in.shapes {
		if remaining[s] == 0 {
			continue
		}
		if p.most[s] = in.holds(&z, &in.shapes[s]); p.most[s] == 0 {
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
	p.runs.reset(64)
	p.runLen, p.fills = p.runLen[:0], p.fills[:0]
	for _, s := range p.order {
		sh := in.shapes[s]
		req, r, most := sh.req, remaining[s], p.most[s]
		if !sh.isolated {
			r = p.firstFit(s, req, r, most)
		}
		if r == 0 {
			continue
		}
		// Open new nodes for what is left, within the limit.
		perNode, opened := min(most, r), out.nodes
		allowed := int64(0)
		switch {
		case limit == 0:
			allowed = math.MaxInt64
		case limit > 0:
			allowed = int64(max(limit-out.nodes, 0))
		}
		full := min(r/perNode, allowed)
		if full > 0 {
			p.open(s, z.alloc.Sub(times(req, perNode)), out.nodes, int(full), perNode)
			out.nodes += int(full)
			r -= full * perNode
		}
		if r > 0 && r < perNode && allowed > full {
			p.open(s, z.alloc.Sub(times(req, r)), out.nodes, 1, r)
			out.nodes++
			r = 0
		}
		if sh.isolated { // no other shape may use these nodes
			for first := opened; first < out.nodes; first += p.runLen[first] {
				p.runs.set(first, emptySlot)
			}
		}
		out.ceiling += r
	}
	for _, s := range p.order {
		out.placed += remaining[s]
	}
	out.placed -= out.ceiling
	return out
}

// firstFit puts up to r pods of shape s on the open runs, lowest node
// first and at most most per node, and returns how many are left. Each
// node is visited once, so the cap holds.
func (p *packer) firstFit(s int32, req types.Resources, r, most int64) int64 {
	lo := 0
	for r > 0 {
		first := p.runs.firstFrom(lo, req)
		if first < 0 {
			break
		}
		free, n := p.runs.free(first), p.runLen[first]
		k := min(fitCount(free, req), r, most)
		if r >= k*int64(n) { // every node of the run takes k
			p.note(s, first, n, k)
			p.runs.set(first, free.Sub(times(req, k)))
			r -= k * int64(n)
			lo = first + n
			continue
		}
		// The run splits: full nodes take k, one node the rest, the others
		// stay as they were.
		full, rest := int(r/k), r%k
		at := first
		if full > 0 {
			p.note(s, at, full, k)
			p.setRun(at, full, free.Sub(times(req, k)))
			at += full
		}
		if rest > 0 {
			p.note(s, at, 1, rest)
			p.setRun(at, 1, free.Sub(times(req, rest)))
			at++
		}
		if untouched := first + n - at; untouched > 0 {
			p.setRun(at, untouched, free)
		}
		r = 0
	}
	return r
}

// open adds n new nodes, numbered from first, holding perNode pods of
// shape s each.
func (p *packer) open(s int32, free types.Resources, first, n int, perNode int64) {
	p.note(s, first, n, perNode)
	if need, have := first+n, len(p.runLen); need > have {
		p.runLen = slices.Grow(p.runLen, need-have)[:need]
		clear(p.runLen[have:])
	}
	p.setRun(first, n, free)
}

func (p *packer) setRun(first, n int, free types.Resources) {
	p.runLen[first] = n
	p.runs.set(first, free)
}

func (p *packer) note(s int32, first, n int, perNode int64) {
	if p.record {
		p.fills = append(p.fills, fill{shape: s, node: first, nodes: n, perNode: perNode})
	}
}

// dominantShare is the largest fraction of one node's room the request
// takes in any dimension.
func dominantShare(req, alloc types.Resources) float64 {
	share := 0.0
	for _, d := range [5][2]int64{
		{req.MilliCPU, alloc.MilliCPU}, {req.Memory, alloc.Memory},
		{req.GPUs, alloc.GPUs}, {req.Pods, alloc.Pods}, {req.EphemeralStorage, alloc.EphemeralStorage},
	} {
		if d[0] > 0 && d[1] > 0 {
			share = max(share, float64(d[0])/float64(d[1]))
		}
	}
	return share
}
