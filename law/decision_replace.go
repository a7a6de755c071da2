package law

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Replacement consolidation (Rules.Replace), in Karpenter's order: when
// no underused node can simply go, the first candidates whose pods one
// strictly cheaper node would hold are replaced by it. The new node is
// bought first (ActionReplace); the old ones are drained only once it is
// Ready and their pods surely fit its real free room (replacementDrain),
// so a pod never waits for a boot and never strands.

// maxReplaceCandidates is Karpenter's bound on a multi-node consolidation.
const maxReplaceCandidates = 100

// Replacement is a replacement under way, durable pool state: one node of
// Size asked for at Since to take the pods of Old.
type Replacement struct {
	Old   []string  `json:"old"`
	Size  string    `json:"size"`
	Since time.Time `json:"since"`
	// Saves is the hourly price the old nodes cost more than the new one.
	Saves float64 `json:"saves,omitempty"`
	// Node is the new node once it was first seen (Rules.KeepReplacement,
	// NewReplacementNode); empty before.
	Node string `json:"node,omitempty"`
	// Lifecycle says why the old node is drifted or expired when the
	// replacement is drift's or expiry's (decision_lifecycle.go), not
	// consolidation's; empty for consolidation.
	Lifecycle string `json:"lifecycle,omitempty"`
}

// ReplacementLive says whether a replacement is still worth waiting for
// (ReplacementVerdict).
func ReplacementLive(p types.Policy, r *Replacement, obs *types.PoolObservation, now time.Time) bool {
	live, _ := ReplacementVerdict(p, r, obs, now)
	return live
}

// ReplacementVerdict says whether a replacement is still worth waiting
// for and, when it is not, why: every old node is still there, its new
// node, once seen (Replacement.Node), is still there and not leaving, and
// the provision timeout since it was asked for has not passed. A
// replacement that is not live is dropped; its new node, if one came, is
// ordinary capacity the other rules judge.
func ReplacementVerdict(p types.Policy, r *Replacement, obs *types.PoolObservation, now time.Time) (bool, string) {
	if r == nil || obs == nil {
		return false, ""
	}
	what := fmt.Sprintf("replacement of %s by one %s abandoned", strings.Join(r.Old, ", "), r.Size)
	for _, name := range r.Old {
		if _, ok := nodeNamed(obs, name); !ok {
			return false, fmt.Sprintf("%s: old node %s is gone", what, name)
		}
	}
	if r.Node != "" {
		if n, ok := nodeNamed(obs, r.Node); !ok || n.State == types.NodeDeleting {
			return false, fmt.Sprintf("%s: its new node %s is gone", what, r.Node)
		}
	}
	timeout := p.EffectiveProvisionTimeout()
	if now.After(r.Since.Add(timeout)) {
		if _, ready := replacementNode(obs, r); !ready {
			return false, fmt.Sprintf("%s: its new node was not Ready within the provision timeout (%s)", what, timeout)
		}
		return false, fmt.Sprintf("%s: its new node %s is Ready but the old nodes were not drained within the provision timeout (%s); it is ordinary capacity now", what, cmp.Or(r.Node, "of "+r.Size), timeout)
	}
	return true, ""
}

// NewReplacementNode names the replacement's new node in obs: its
// recorded Node, else the first node of its size created since it was
// asked for (the earliest, then by name) that is not one of the old ones
// and not leaving; "" while none is seen.
func NewReplacementNode(obs *types.PoolObservation, r *Replacement) string {
	if r == nil || obs == nil {
		return ""
	}
	if r.Node != "" {
		return r.Node
	}
	var out types.NodeObservation
	for _, n := range obs.Nodes {
		if n.Size != r.Size || n.State == types.NodeDeleting || n.CreatedAt.Before(r.Since) || slices.Contains(r.Old, n.Name) {
			continue
		}
		if out.Name == "" || n.CreatedAt.Before(out.CreatedAt) || n.CreatedAt.Equal(out.CreatedAt) && n.Name < out.Name {
			out = n
		}
	}
	return out.Name
}

func nodeNamed(obs *types.PoolObservation, name string) (types.NodeObservation, bool) {
	for _, n := range obs.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return types.NodeObservation{}, false
}

// replacementNode is the Ready node a replacement bought: its recorded
// Node, else of its size, created since it was asked for, the newest such.
func replacementNode(obs *types.PoolObservation, r *Replacement) (types.NodeObservation, bool) {
	if r.Node != "" {
		n, ok := nodeNamed(obs, r.Node)
		return n, ok && n.State == types.NodeReady
	}
	var out types.NodeObservation
	found := false
	for _, n := range obs.Nodes {
		if n.State == types.NodeReady && n.Size == r.Size && !n.CreatedAt.Before(r.Since) && (!found || n.CreatedAt.After(out.CreatedAt)) {
			out, found = n, true
		}
	}
	return out, found
}

// keptForReplacement is the node a live replacement waits for, which no
// other rule may remove (Rules.KeepReplacement); "" if none.
func keptForReplacement(in DecisionInput) string {
	if !in.Rules.Replace || !in.Rules.KeepReplacement || !ReplacementLive(in.Policy, in.Replacing, in.Observation, in.Now) {
		return ""
	}
	return NewReplacementNode(in.Observation, in.Replacing)
}

// replacementDrain decides the second half of a replacement once its new
// node is Ready: drain the old nodes when every one is still Ready,
// evictable and of the new node's template, all their pods' requests
// together fit the new node's free room (one node: the sum fitting is the
// whole check), the drain budget has room for them all and the floor
// stays. It reports false while the replacement must wait (new node not
// Ready yet, or its room taken meanwhile: the replacement then lapses).
func replacementDrain(in DecisionInput, p types.Policy, current int, d *Decision) bool {
	r := in.Replacing
	obs := in.Observation
	nn, ok := replacementNode(obs, r)
	if !ok {
		d.Blocked = append(d.Blocked, fmt.Sprintf("replacing %s: waiting for the new %s node to be Ready", Plural(len(r.Old), "node"), r.Size))
		return false
	}
	var load types.Resources
	for _, name := range r.Old {
		n, _ := nodeNamed(obs, name)
		if n.State != types.NodeReady || len(n.DrainBlockers) > 0 || !replacementAdmits(in, n, nn) {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not replaced, it is no longer Ready, evictable or of %s's template", name, nn.Name))
			return false
		}
		if until, blocked := in.DrainBlocked[name]; blocked && in.Now.Before(until) {
			return false
		}
		load = load.Add(n.Requested)
	}
	if nn.Allocatable.Pods == 0 {
		load.Pods = 0 // the node bounds no pod slots
	}
	if !load.Fits(nn.FreeRoom()) {
		d.Skipped = append(d.Skipped, fmt.Sprintf("replacing %s: their pods (%s) no longer fit the free room of %s", Plural(len(r.Old), "node"), load, nn.Name))
		return false
	}
	if current-len(r.Old) < p.MinNodes || DrainSlots(in.Policy, current, draining(in)) < len(r.Old) {
		d.Blocked = append(d.Blocked, fmt.Sprintf("replacing %s: the floor or the disruption budget does not allow draining them now", Plural(len(r.Old), "node")))
		return false
	}
	if in.KeepsHeadroom != nil {
		if ok, why := in.KeepsHeadroom(r.Old); !ok {
			d.Skipped = append(d.Skipped, fmt.Sprintf("replacing %s: kept for headroom (%s)", Plural(len(r.Old), "node"), why))
			return false
		}
	}
	d.Action = ActionScaleDown
	d.RemoveNodes = append([]string(nil), r.Old...)
	d.Reason = fmt.Sprintf("replacement: %s drained now that %s (%s) is Ready and holds their pods, saving $%.3f/h", Plural(len(r.Old), "node"), nn.Name, r.Size, r.Saves)
	return true
}

// replace looks for a replacement among the consolidation candidates
// (least utilized first): the longest prefix, up to limit and
// maxReplaceCandidates, whose nodes are without GPUs and of one template
// and whose pods' requests together, with the daemons' reserve, fit one
// size strictly cheaper than they cost together. It sets the decision
// and reports whether it found one.
func replace(in DecisionInput, p types.Policy, current int, cands []types.NodeObservation, limit int, d *Decision) bool {
	if ReplacementLive(in.Policy, in.Replacing, in.Observation, in.Now) || len(in.SizePrice) == 0 || current >= p.MaxNodes {
		return false
	}
	for _, n := range in.Observation.Nodes {
		if n.State == types.NodeProvisioning {
			return false // the room booting nodes bring is not placed yet
		}
	}
	var usable []types.NodeObservation
	for _, c := range cands {
		if _, priced := in.SizePrice[c.Size]; priced && c.Allocatable.GPUs == 0 && c.Requested.GPUs == 0 && (len(usable) == 0 || sameTemplate(c, usable[0], in.Rules.KeepReplacement) && sameTemplate(usable[0], c, in.Rules.KeepReplacement)) {
			usable = append(usable, c)
		}
	}
	sizes := make([]string, 0, len(in.SizePrice))
	for name := range in.SizePrice {
		if room, ok := in.SizeRoom[name]; ok && room.GPUs == 0 {
			sizes = append(sizes, name)
		}
	}
	sort.Slice(sizes, func(i, j int) bool {
		if a, b := in.SizePrice[sizes[i]], in.SizePrice[sizes[j]]; a != b {
			return a < b
		}
		return sizes[i] < sizes[j]
	})
	for k := min(len(usable), limit, maxReplaceCandidates); k >= 1; k-- {
		set := usable[:k]
		var load, reserve types.Resources
		cost := 0.0
		for _, n := range set {
			load = load.Add(n.Requested)
			reserve = types.Resources{MilliCPU: max(reserve.MilliCPU, n.Reserved.MilliCPU), Memory: max(reserve.Memory, n.Reserved.Memory),
				EphemeralStorage: max(reserve.EphemeralStorage, n.Reserved.EphemeralStorage), Pods: max(reserve.Pods, n.Reserved.Pods)}
			cost += in.SizePrice[n.Size]
		}
		if load.Pods <= 0 {
			continue // empty nodes are the idle rule's and packElsewhere's
		}
		need := load.Add(reserve)
		for _, size := range sizes {
			price := in.SizePrice[size]
			if price >= cost {
				break
			}
			room, want := in.SizeRoom[size], need
			if room.Pods == 0 {
				want.Pods = 0
			}
			if !want.Fits(room) {
				continue
			}
			if in.Rules.ReplaceAtRate && k > 1 && dearerPerUnit(in, set, size, load) {
				continue
			}
			old := make([]string, k)
			for i, n := range set {
				old[i] = n.Name
			}
			d.Action = ActionReplace
			since := in.Now
			if in.Rules.KeepReplacement {
				// A node's creation time is kept to the second (the API
				// server's timestamps): a node up within the second the
				// replacement was decided is still its new node.
				since = since.Truncate(time.Second)
			}
			d.Replacing = &Replacement{Old: old, Size: size, Since: since, Saves: cost - price}
			d.Reason = fmt.Sprintf("consolidation: %s ($%.3f/h) replaced by one %s ($%.3f/h) that holds all their pods (%s)",
				Plural(k, "underused node"), cost, size, price, load)
			return true
		}
	}
	return false
}

// dearerPerUnit says whether size costs more per copy of load than the
// dearest of the old nodes' sizes (Rules.ReplaceAtRate), within 1 %. It
// is asked of merges only: one node replaced by one cheaper shrinks the
// pool's capacity, and its rate then matters less than its price.
func dearerPerUnit(in DecisionInput, old []types.NodeObservation, size string, load types.Resources) bool {
	perCopy := func(size string) float64 {
		room, copies := in.SizeRoom[size], 0.0
		for i, dim := range [][2]int64{{room.MilliCPU, load.MilliCPU}, {room.Memory, load.Memory}} {
			if dim[1] <= 0 {
				continue
			}
			if c := float64(dim[0]) / float64(dim[1]); i == 0 || copies == 0 || c < copies {
				copies = c
			}
		}
		if copies <= 0 {
			return 0
		}
		return in.SizePrice[size] / copies
	}
	best := 0.0
	for _, n := range old {
		if r := perCopy(n.Size); r > best {
			best = r
		}
	}
	return best > 0 && perCopy(size) > best*1.01
}

// replacementAdmits says whether the replacement's new node to surely
// admits the pods of the old node from: sameTemplate, or for GPU nodes
// sameGPUTemplate when Rules.ReplaceGPU is on.
func replacementAdmits(in DecisionInput, from, to types.NodeObservation) bool {
	if from.Allocatable.GPUs == 0 && to.Allocatable.GPUs == 0 && from.Requested.GPUs == 0 {
		return sameTemplate(from, to, in.Rules.KeepReplacement)
	}
	return in.Rules.ReplaceGPU && sameGPUTemplate(in.SizeGPUModel, from, to, in.Rules.KeepReplacement)
}

// replaceGPU is replacement consolidation for GPU nodes (Rules.ReplaceGPU),
// tried when nothing else consolidates. Candidates are the Ready GPU nodes
// of a known model, evictable, at least ConsolidateAfter old, full or not
// (a GPU node is full on its devices first, and the waste is in paying
// for small sizes' CPUs per device); the dearest per device come first.
// Per model, the longest prefix (up to limit and maxReplaceCandidates) of
// one template whose pods' requests, with the daemons' reserve, fit one
// size of that model strictly cheaper than they cost together is replaced
// by it, as replace does: bought first, drained once it is Ready and holds
// their pods (replacementDrain).
func replaceGPU(in DecisionInput, p types.Policy, current int, limit int, d *Decision) bool {
	if ReplacementLive(in.Policy, in.Replacing, in.Observation, in.Now) || len(in.SizePrice) == 0 || len(in.SizeGPUModel) == 0 || current >= p.MaxNodes || limit <= 0 {
		return false
	}
	_, _, after := p.EffectiveConsolidation()
	var cands []types.NodeObservation
	for _, n := range in.Observation.Nodes {
		if n.State == types.NodeProvisioning {
			return false // the room booting nodes bring is not placed yet
		}
		_, priced := in.SizePrice[n.Size]
		if n.State != types.NodeReady || n.Allocatable.GPUs == 0 || !priced || in.SizeGPUModel[n.Size] == "" || len(n.DrainBlockers) > 0 {
			continue
		}
		if until, blocked := in.DrainBlocked[n.Name]; blocked && in.Now.Before(until) {
			continue
		}
		if in.Now.Before(n.CreatedAt.Add(after)) {
			continue
		}
		cands = append(cands, n)
	}
	perDevice := func(n types.NodeObservation) float64 { return in.SizePrice[n.Size] / float64(n.Allocatable.GPUs) }
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if pa, pb := perDevice(a), perDevice(b); pa != pb {
			return pa > pb
		}
		if ua, ub := utilization(a), utilization(b); ua != ub {
			return ua < ub
		}
		return a.Name < b.Name
	})
	tried := map[string]bool{}
	for _, first := range cands {
		model := in.SizeGPUModel[first.Size]
		if tried[model] {
			continue
		}
		tried[model] = true
		var set []types.NodeObservation
		for _, c := range cands {
			if in.SizeGPUModel[c.Size] == model && sameLabelsAndTaints(c, first, in.Rules.KeepReplacement) && sameLabelsAndTaints(first, c, in.Rules.KeepReplacement) {
				set = append(set, c)
			}
		}
		var sizes []string
		for name, m := range in.SizeGPUModel {
			if _, priced := in.SizePrice[name]; m == model && priced {
				if room, ok := in.SizeRoom[name]; ok && room.GPUs > 0 {
					sizes = append(sizes, name)
				}
			}
		}
		sort.Slice(sizes, func(i, j int) bool {
			if a, b := in.SizePrice[sizes[i]], in.SizePrice[sizes[j]]; a != b {
				return a < b
			}
			return sizes[i] < sizes[j]
		})
		if packSet(in, set, sizes, min(limit, maxReplaceCandidates), d) {
			return true
		}
	}
	return false
}

// packSet looks, for each size in turn, at the nodes of set (in order)
// whose pods that size holds together, first fit, up to limit nodes, and
// buys the size saving the most per hour over the nodes it replaces, if
// any saves. A prefix would stop at the first node too large to join;
// skipping it finds the nodes that do fit.
func packSet(in DecisionInput, set []types.NodeObservation, sizes []string, limit int, d *Decision) bool {
	best, bestSave := "", 0.0
	var bestOld []string
	var bestLoad types.Resources
	for _, size := range sizes {
		room, price := in.SizeRoom[size], in.SizePrice[size]
		// Nodes dearer per device first, then the smallest share
		// of the size's room (most nodes join), then by name.
		order := slices.Clone(set)
		share := func(n types.NodeObservation) float64 {
			r := n.Requested
			return max(frac(r.MilliCPU, room.MilliCPU), frac(r.Memory, room.Memory), frac(r.GPUs, room.GPUs))
		}
		sort.SliceStable(order, func(i, j int) bool {
			a, b := order[i], order[j]
			if pa, pb := in.SizePrice[a.Size]/float64(a.Allocatable.GPUs), in.SizePrice[b.Size]/float64(b.Allocatable.GPUs); pa != pb {
				return pa > pb
			}
			if sa, sb := share(a), share(b); sa != sb {
				return sa < sb
			}
			return a.Name < b.Name
		})
		var load, reserve types.Resources
		cost := 0.0
		var old []string
		for _, n := range order {
			if len(old) == limit {
				break
			}
			if n.Requested.Pods <= 0 && n.Requested.GPUs == 0 && n.Requested.MilliCPU == 0 {
				continue // empty nodes are the idle rule's
			}
			l := load.Add(n.Requested)
			r := types.Resources{MilliCPU: max(reserve.MilliCPU, n.Reserved.MilliCPU), Memory: max(reserve.Memory, n.Reserved.Memory),
				EphemeralStorage: max(reserve.EphemeralStorage, n.Reserved.EphemeralStorage), Pods: max(reserve.Pods, n.Reserved.Pods)}
			want := l.Add(r)
			if room.Pods == 0 {
				want.Pods = 0
			}
			if !want.Fits(room) {
				continue
			}
			load, reserve, cost = l, r, cost+in.SizePrice[n.Size]
			old = append(old, n.Name)
		}
		if save := cost - price; len(old) > 0 && save > bestSave+1e-9 {
			best, bestSave, bestOld, bestLoad = size, save, old, load
		}
	}
	if best == "" {
		return false
	}
	d.Action = ActionReplace
	d.Replacing = &Replacement{Old: bestOld, Size: best, Since: in.Now, Saves: bestSave}
	d.Reason = fmt.Sprintf("consolidation: %s ($%.3f/h) replaced by one %s ($%.3f/h, same GPU model) that holds all their pods (%s)",
		Plural(len(bestOld), "GPU node"), bestSave+in.SizePrice[best], best, in.SizePrice[best], bestLoad)
	return true
}

// frac is a / b, 0 when b is.
func frac(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
