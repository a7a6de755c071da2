package law

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// Packing several removals for any scheduler (Rules.PackAnyOrder).
//
// packInto reserves, for each node it removes, slots of that node's
// largest pod on the nodes it may count, first fit. One removal's pods
// then surely fit, but the scheduler does not follow the reservations of
// several: it may bind one node's small pod into the room counted for
// another node's large pod (a node the law did not count for it, a
// smaller one, or simply another order), and the large pod finds no room.
// The rule checks the set as a whole instead, in a way no order or choice
// of the scheduler can defeat:
//
//   - every pod that can land on node n is at most L(n), the largest slot
//     among the set's nodes whose pods can land there, cut to n's free
//     room (a pod that lands fits it); so n refuses a pod of removed node
//     c (at most c's slot) only once it has taken k_c(n) = 1 + slots of L(n) in its free room less
//     c's slot;
//   - a pod of c fails only if every node c may count on has taken its
//     k_c(n), and those pods came from the set's nodes whose pods can land
//     there, that pod left out: so when, for every c, the k_c(n) over the
//     nodes c counts on reach the pods of every set node that can land on
//     any of them, every pod finds room.
//
// Pods of a node without GPUs land only on nodes without GPUs (as sizing
// keeps them off GPU nodes, and packIdle counts them); a GPU node's pods
// anywhere (some may ask for no GPU), whatever the law counts (labels,
// size): that errs towards keeping a node.
//
// Removed nodes of one template and slot count on the same nodes, so the
// set is kept as groups of them: a decision over a large pool costs a
// pass over its nodes per group, not per node removed.

// anyOrderSet is the set of removals accepted so far and its bookkeeping,
// over the Ready nodes of the observation.
type anyOrderSet struct {
	targets []types.NodeObservation
	index   map[string]int
	free    []types.Resources
	// large is L(n); out marks nodes being removed.
	large []types.Resources
	out   []bool
	// countedBy lists, per target, the groups that count on it.
	countedBy [][]int
	groups    []anyOrderGroup
	byKey     map[string]int
}

// anyOrderGroup is the set's removed nodes of one template and slot.
type anyOrderGroup struct {
	gpu        bool // the nodes have GPUs
	slot       types.Resources
	pods       int64
	counts     []int
	have, need int64
	// Where its counted room is: any node without GPUs, any with.
	cpuRoom, gpuRoom bool
}

func newAnyOrder(obs *types.PoolObservation) *anyOrderSet {
	a := &anyOrderSet{index: map[string]int{}, byKey: map[string]int{}}
	for _, n := range obs.Nodes {
		if n.State != types.NodeReady {
			continue
		}
		a.index[n.Name] = len(a.targets)
		a.targets = append(a.targets, n)
		a.free = append(a.free, withSlots(n.FreeRoom(), n))
	}
	a.large = make([]types.Resources, len(a.targets))
	a.out = make([]bool, len(a.targets))
	a.countedBy = make([][]int, len(a.targets))
	return a
}

// groupKey names what the nodes the law counts for c depend on: its size,
// GPUs, labels (but its size's and machine's own) and taints, and its slot.
func groupKey(c types.NodeObservation, slot types.Resources) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%d|%+v|", c.Size, c.Allocatable.GPUs, c.Requested.GPUs, slot)
	keys := make([]string, 0, len(c.Labels))
	for k := range c.Labels {
		if !slices.Contains(sizeLabels, k) && !slices.Contains(MachineLabels, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s,", k, c.Labels[k])
	}
	for _, t := range c.Taints {
		fmt.Fprintf(&b, "|%s=%s:%s", t.Key, t.Value, t.Effect)
	}
	return b.String()
}

// canLand says whether pods of node c can be bound on node n: a node
// without GPUs gives its pods only to nodes without; a GPU node's pods may
// ask for no GPU, and go anywhere.
func canLand(c types.NodeObservation, n types.NodeObservation) bool {
	return c.Allocatable.GPUs > 0 || n.Allocatable.GPUs == 0
}

// landsIn says whether pods of group g can land on a node group of counts on.
func (g anyOrderGroup) landsIn(of anyOrderGroup) bool {
	if !g.gpu {
		return of.cpuRoom
	}
	return of.cpuRoom || of.gpuRoom
}

// sure is k_c(n) for pods at most slot, with L(n) large: how many of the
// set's pods node n surely takes before it refuses one of them.
func (a *anyOrderSet) sure(n int, slot, large types.Resources) int64 {
	if a.out[n] || !slot.Fits(a.free[n]) {
		return 0
	}
	return 1 + slotsIn(a.free[n].Sub(slot), large, a.targets[n].Allocatable.Pods > 0)
}

// try adds node c, whose pods (count of them, none larger than slot) the
// law counts on the nodes admits allows, when the set stays sure; it
// changes nothing when it would not. An empty node (count 0) only takes
// its room from the others. admits must depend on c only through what
// groupKey names.
func (a *anyOrderSet) try(c types.NodeObservation, slot types.Resources, count int64, admits func(n types.NodeObservation) bool) bool {
	type change struct {
		n     int
		large types.Resources
	}
	var undo []change
	saved := slices.Clone(a.groups)
	self, isTarget := a.index[c.Name]
	// rollback undoes the try and says it failed.
	rollback := func() bool {
		for i := len(undo) - 1; i >= 0; i-- {
			a.large[undo[i].n] = undo[i].large
		}
		a.groups = saved
		if isTarget {
			a.out[self] = false
		}
		return false
	}
	// c's own room is no one's once it goes.
	if isTarget {
		for _, i := range a.countedBy[self] {
			a.groups[i].have -= a.sure(self, a.groups[i].slot, a.large[self])
		}
		a.out[self] = true
	}
	if count == 0 {
		// An empty node only takes its room from the others.
		return a.holds() || rollback()
	}
	key := groupKey(c, slot)
	gi, known := a.byKey[key]
	if !known {
		g := anyOrderGroup{gpu: c.Allocatable.GPUs > 0, slot: slot}
		for n, t := range a.targets {
			if a.out[n] || !canLand(c, t) {
				continue
			}
			// A pod that lands on n fits its free room, whatever its slot.
			if l := a.large[n].Max(slot.Min(a.free[n])); l != a.large[n] {
				for _, i := range a.countedBy[n] {
					s := a.groups[i].slot
					a.groups[i].have += a.sure(n, s, l) - a.sure(n, s, a.large[n])
				}
				undo = append(undo, change{n, a.large[n]})
				a.large[n] = l
			}
			if !admits(t) || !slot.Fits(a.free[n]) {
				continue
			}
			g.counts = append(g.counts, n)
			if t.Allocatable.GPUs > 0 {
				g.gpuRoom = true
			} else {
				g.cpuRoom = true
			}
		}
		for _, n := range g.counts {
			g.have += a.sure(n, slot, a.large[n])
		}
		for _, o := range a.groups {
			if o.landsIn(g) {
				g.need += o.pods
			}
		}
		gi = len(a.groups)
		a.groups = append(a.groups, g)
	}
	g := &a.groups[gi]
	g.pods += count
	for i := range a.groups {
		if g.landsIn(a.groups[i]) {
			a.groups[i].need += count
		}
	}
	if !a.holds() {
		return rollback()
	}
	if !known {
		a.byKey[key] = gi
		for _, n := range a.groups[gi].counts {
			a.countedBy[n] = append(a.countedBy[n], gi)
		}
	}
	return true
}

// holds says whether every group's pods surely find room.
func (a *anyOrderSet) holds() bool {
	for _, g := range a.groups {
		if g.have < g.need {
			return false
		}
	}
	return true
}
