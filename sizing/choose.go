package sizing

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

func plan(req Request, excluded []string) Plan {
	if len(req.Promised) > 0 {
		req.Existing, req.ruledNodes = reserve(req, excluded)
		req.Promised = nil
	}
	in := prepare(req, excluded)
	remaining, existingFills := in.fillExisting()

	var p packer
	alts := make([]Alternative, len(in.sizes), len(in.sizes)+len(in.skipped))
	// Sizes that look alike to every pod pack alike: catalogs repeat one
	// shape across families and generations (4 vCPU / 16 GiB comes in a
	// dozen names), so each look is packed once and only priced per size.
	packed := make(map[string]outcome, len(in.sizes))
	// On big inputs, sizes are tried most promising first and a size whose
	// lower bound already loses to the best packing so far is not packed
	// (see bound.go); small inputs pack every size exactly.
	order, bounds := in.packOrder(remaining)
	var best *Alternative
	var bestSize types.InstanceType
	compare, nodesFirst := compareAlternatives, req.Objective == types.SizingNodes
	if nodesFirst {
		compare = compareByNodes
	}
	for _, i := range order {
		z := in.sizes[i]
		// A size at the best one's rate may win on node count under
		// FewerNodes whatever its cost, so it is always packed; the cost
		// bounds say nothing of node counts.
		keep := nodesFirst || (req.FewerNodes && best != nil && sameRate(z.t, bestSize))
		if b := bounds; b != nil && best != nil && !keep && b[i].loses(*best, z.t.HourlyPrice) {
			alts[i] = b[i].alternative(z)
			continue
		}
		look := in.lookOf(z)
		o, ok := packed[look]
		if !ok {
			o = p.pack(in, remaining, z, in.limit)
			packed[look] = o
		}
		alts[i] = Alternative{
			Size: z.t.Name, NewNodes: o.nodes, HourlyCost: float64(o.nodes) * z.t.HourlyPrice,
			Placed: int(o.placed), Left: int(o.unfit + o.ceiling),
		}
		if best == nil || compare(alts[i], *best) < 0 {
			best, bestSize = &alts[i], z.t
		}
	}
	// Names are unique among usable sizes, so this order is total.
	slices.SortFunc(alts, compare)
	if req.FewerNodes && !nodesFirst {
		in.preferFewerNodes(alts)
	}
	alts = append(alts, in.skipped...)

	out := Plan{Alternatives: alts}
	var winner *size
	if len(in.sizes) > 0 && alts[0].NewNodes > 0 {
		best := alts[0]
		winner = in.sizeNamed(best.Size)
		out.Size, out.NewNodes, out.HourlyCost = best.Size, best.NewNodes, best.HourlyCost
		p.record = true
		p.pack(in, remaining, *winner, in.limit)
	}
	in.report(&out, in.assign(existingFills, p.fills), winner)
	return out
}

// compareAlternatives is the choice order: fewest pods left unplaced, then
// cheapest, then fewest nodes, then name.
func compareAlternatives(a, b Alternative) int {
	if c := cmp.Compare(a.Left, b.Left); c != 0 {
		return c
	}
	if !sameCost(a.HourlyCost, b.HourlyCost) {
		return cmp.Compare(a.HourlyCost, b.HourlyCost)
	}
	return cmp.Or(cmp.Compare(a.NewNodes, b.NewNodes), strings.Compare(a.Size, b.Size))
}

// compareByNodes is the order of types.SizingNodes: fewest pods left
// unplaced, then fewest nodes, then cheapest, then name.
func compareByNodes(a, b Alternative) int {
	if c := cmp.Compare(a.Left, b.Left); c != 0 {
		return c
	}
	if c := cmp.Compare(a.NewNodes, b.NewNodes); c != 0 {
		return c
	}
	if !sameCost(a.HourlyCost, b.HourlyCost) {
		return cmp.Compare(a.HourlyCost, b.HourlyCost)
	}
	return strings.Compare(a.Size, b.Size)
}

// preferFewerNodes moves to the front the alternative that, at the rate
// of the cheapest (alts[0]), leaves as few pods out on the fewest nodes.
func (in *input) preferFewerNodes(alts []Alternative) {
	if len(alts) == 0 || alts[0].NewNodes <= 1 {
		return
	}
	first := in.sizeNamed(alts[0].Size)
	pick := 0
	for k := 1; k < len(alts); k++ {
		a := alts[k]
		if a.Skipped != "" || a.Estimated || a.NewNodes == 0 || a.Left != alts[0].Left || a.NewNodes >= alts[pick].NewNodes {
			continue
		}
		if z := in.sizeNamed(a.Size); z != nil && first != nil && sameRate(z.t, first.t) {
			pick = k
		}
	}
	if pick > 0 {
		chosen := alts[pick]
		copy(alts[1:pick+1], alts[:pick])
		alts[0] = chosen
	}
}

// sameRate says two sizes cost the same per vCPU, per byte of memory and
// per GPU (within 1%): one is the other scaled, price and all.
func sameRate(a, b types.InstanceType) bool {
	if a.HourlyPrice <= 0 || b.HourlyPrice <= 0 || (a.GPUs == 0) != (b.GPUs == 0) || a.GPUModel != b.GPUModel {
		return false
	}
	for _, d := range [][2]int64{{a.MilliCPU, b.MilliCPU}, {a.Memory, b.Memory}, {a.GPUs, b.GPUs}} {
		if d[0] == 0 && d[1] == 0 {
			continue
		}
		x, y := float64(d[0])*b.HourlyPrice, float64(d[1])*a.HourlyPrice
		if math.Abs(x-y) > 0.01*max(x, y) {
			return false
		}
	}
	return true
}

// sameCost treats costs within float rounding of each other as a tie, so
// that 3 × 0.1 and 0.3 fall through to the node-count tie-break.
func sameCost(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}

func (in *input) sizeNamed(name string) *size {
	for i := range in.sizes {
		if in.sizes[i].t.Name == name {
			return &in.sizes[i]
		}
	}
	return nil
}

// Per-pod targets: a new node's index (>= 0), notPlaced, or an existing
// node encoded as existingTarget(i).
const notPlaced = -1

func existingTarget(i int) int32 { return int32(-2 - i) }

// assignment is where each pod goes: targets for an entry that is one pod,
// parts for one that stands for several (its pods may spread over nodes).
type assignment struct {
	targets []int32
	parts   map[int32][]part
}

type part struct {
	target int32
	n      int64
}

// assign hands each shape's pods, in key order, to the nodes its fills
// reserved: existing nodes first, then new ones in node order.
func (in *input) assign(existingFills, newFills []fill) assignment {
	a := assignment{targets: make([]int32, len(in.pods)), parts: map[int32][]part{}}
	for i := range a.targets {
		a.targets[i] = notPlaced
	}
	cursor := make([]int32, len(in.shapes))
	used := make([]int64, len(in.shapes))
	for s := range in.shapes {
		cursor[s] = in.shapes[s].first
	}
	for _, f := range existingFills {
		in.give(&a, cursor, used, f, existingTarget(f.node), 0)
	}
	for _, f := range newFills {
		in.give(&a, cursor, used, f, int32(f.node), 1)
	}
	return a
}

// give places the next f.nodes*f.perNode pods of f's shape: node
// first+j*step for the j-th node of the fill. used is how many pods of the
// shape's current entry are placed already.
func (in *input) give(a *assignment, cursor []int32, used []int64, f fill, first, step int32) {
	s := f.shape
	for j := range int32(f.nodes) {
		t := first + j*step
		for need := f.perNode; need > 0; {
			i := in.byShape[cursor[s]]
			w := int64(in.pods[i].Pods())
			if w == 1 {
				a.targets[i] = t
				cursor[s]++
				need--
				continue
			}
			k := min(w-used[s], need)
			a.parts[i] = append(a.parts[i], part{target: t, n: k})
			used[s] += k
			need -= k
			if used[s] == w {
				cursor[s]++
				used[s] = 0
			}
		}
	}
}

// report writes Placements and Unplaceable in pod-key order.
func (in *input) report(out *Plan, a assignment, winner *size) {
	placed := len(a.parts)
	for _, t := range a.targets {
		if t != notPlaced {
			placed++
		}
	}
	newNames := nodeNames(out.NewNodes)
	node := func(t int32) string {
		if t >= 0 {
			return newNames[t]
		}
		return in.existing[-2-t].target
	}
	out.Placements = make([]Placement, 0, placed)
	reasons := make([]*Unplaceable, len(in.shapes))
	unplaced := func(i int32, n int64) {
		u := Unplaceable{Pod: in.keys[i]}
		if s := in.podShape[i]; s == invalidPod {
			u.Code, u.Reason = CodeInvalidRequest, invalidReason(in.pods[i].Requests)
		} else {
			if reasons[s] == nil {
				reasons[s] = in.whyUnplaced(in.shapes[s], winner, out)
			}
			u = *reasons[s]
			u.Pod = in.keys[i]
		}
		if in.pods[i].Count > 1 {
			u.Count = int(n)
		}
		out.Unplaceable = append(out.Unplaceable, u)
	}
	for _, i := range in.byKey {
		if w := int64(in.pods[i].Pods()); w > 1 {
			for _, pt := range a.parts[i] {
				out.Placements = append(out.Placements, Placement{Pod: in.keys[i], Node: node(pt.target), Count: int(pt.n)})
				w -= pt.n
			}
			if w > 0 {
				unplaced(i, w)
			}
			continue
		}
		if t := a.targets[i]; t != notPlaced {
			out.Placements = append(out.Placements, Placement{Pod: in.keys[i], Node: node(t)})
			continue
		}
		unplaced(i, 1)
	}
}

// nodeNames builds "new:0" … "new:n-1" in one allocation.
func nodeNames(n int) []string {
	var b strings.Builder
	b.Grow(n * (len(NewNodePrefix) + 7))
	ends := make([]int, n)
	var digits [20]byte
	for i := range n {
		b.WriteString(NewNodePrefix)
		b.Write(strconv.AppendInt(digits[:0], int64(i), 10))
		ends[i] = b.Len()
	}
	all := b.String()
	names := make([]string, n)
	start := 0
	for i, end := range ends {
		names[i] = all[start:end]
		start = end
	}
	return names
}

// lookOf is everything packing reads from a size: its room, its GPUs and
// model, and how many of its zone templates each node filter admits.
func (in *input) lookOf(z size) string {
	b := make([]byte, 0, 48+len(z.t.GPUModel)+2*len(in.filters))
	for _, v := range [6]int64{z.alloc.MilliCPU, z.alloc.Memory, z.alloc.GPUs, z.alloc.Pods, z.t.GPUs, z.alloc.EphemeralStorage} {
		b = binary.AppendVarint(b, v)
	}
	b = append(b, z.t.GPUModel...)
	b = append(b, 0)
	for f := range in.filters {
		b = binary.AppendUvarint(b, uint64(in.zonesAdmitting(int32(f), &z)))
	}
	for s := range in.shapes {
		if in.shapes[s].allowedZones != nil {
			b = binary.AppendUvarint(b, uint64(in.allowedZonesAdmitting(&in.shapes[s], &z)))
		}
	}
	return string(b)
}
