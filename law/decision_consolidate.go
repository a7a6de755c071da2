package law

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// The consolidation rules (Rules.Consolidation): a
// scale-up cooldown that holds back only demand already covered, and
// consolidation of underused nodes whose pods the other nodes can hold.

// uncovered returns the overdue pods no booting node has room for: the
// scale-up cooldown holds back only pods the last scale-up covers. Room is
// matched by requests alone, first-fit decreasing, so it errs towards
// "uncovered"; the planner, which counts booting nodes as Existing, then
// buys nothing for a pod that does fit. A pod asking for GPUs is always
// uncovered (the GPU model of a booting node is the planner's to match).
// While machines are asked for but not yet observed their room is
// unknown, and everything counts as covered.
func uncovered(in DecisionInput, pods []types.PendingPod) []types.PendingPod {
	if in.InFlightNodes > 0 {
		return nil
	}
	var free []types.Resources
	for _, n := range in.Observation.Nodes {
		if (n.State == types.NodeProvisioning || n.State == types.NodeNotReady) && n.Allocatable.GPUs == 0 {
			free = append(free, withSlots(n.FreeRoom(), n))
		}
	}
	sorted := append([]types.PendingPod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Requests.MilliCPU > sorted[j].Requests.MilliCPU })
	var out []types.PendingPod
	for _, pod := range sorted {
		need := withSlot(pod.Requests)
		placed := false
		for i := range free {
			if pod.Requests.GPUs == 0 && need.Fits(free[i]) {
				free[i] = free[i].Sub(need)
				placed = true
				break
			}
		}
		if !placed {
			out = append(out, pod)
		}
	}
	return out
}

// utilization is a node's highest share of requests over allocatable on
// CPU, memory and GPUs.
func utilization(n types.NodeObservation) float64 {
	u := max(n.CPUUtilization(), n.MemoryUtilization())
	if n.Allocatable.GPUs > 0 {
		u = max(u, float64(n.Requested.GPUs)/float64(n.Allocatable.GPUs))
	}
	return u
}

// UpdateUnderusedSince folds a new observation into the consolidation
// clocks, as UpdateIdleSince does for the idle ones: a Ready node below
// the consolidation threshold keeps (or starts) its clock; one seen above
// it, not Ready, or gone loses it.
func UpdateUnderusedSince(p types.Policy, prev map[string]time.Time, obs types.PoolObservation) map[string]time.Time {
	enabled, threshold, _ := p.EffectiveConsolidation()
	if !enabled {
		return map[string]time.Time{}
	}
	return foldClocks(prev, obs, func(n types.NodeObservation) bool {
		return n.State == types.NodeReady && utilization(n) < threshold
	})
}

// consolidate removes underused Ready nodes whose pods fit on the nodes
// that stay, when the idle rule found nothing to remove. It runs behind
// the same gates as idle scale-down (fresh data, no pod pending, the
// disruption window open; checked by the caller) and its own: above the
// floor, nothing provisioning, outside both cooldowns, within the drain
// budget, headroom kept. Least utilized nodes go first (fewest pods
// moved), the largest of equals first (most cost saved).
func consolidate(in DecisionInput, p types.Policy, current int, d *Decision, wake func(time.Time, string)) {
	enabled, threshold, after := p.EffectiveConsolidation()
	if !in.Rules.Consolidation || !enabled {
		return
	}
	obs := in.Observation
	var cands []types.NodeObservation
	for _, n := range obs.Nodes {
		if n.State != types.NodeReady || utilization(n) >= threshold {
			continue
		}
		since, ok := in.UnderusedSince[n.Name]
		if !ok || len(n.DrainBlockers) > 0 {
			continue
		}
		until, blocked := in.DrainBlocked[n.Name]
		if blocked && in.Now.Before(until) {
			wake(until, "retry drain of "+n.Name)
			continue
		}
		if end := since.Add(after); in.Now.Before(end) && !(blocked && in.Rules.RetryBlocked) {
			wake(end, "consolidation window "+n.Name)
			continue
		}
		cands = append(cands, n)
	}
	if len(cands) == 0 && !(in.Rules.Replace && in.Rules.ReplaceGPU) {
		return
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if ua, ub := utilization(a), utilization(b); ua != ub {
			return ua < ub
		}
		if a.Allocatable.GPUs != b.Allocatable.GPUs {
			return a.Allocatable.GPUs > b.Allocatable.GPUs
		}
		if a.Allocatable.MilliCPU != b.Allocatable.MilliCPU {
			return a.Allocatable.MilliCPU > b.Allocatable.MilliCPU
		}
		return a.Name < b.Name
	})
	cooldownEnd := scaleDownCooldownEnd(in, p)
	room := current - p.MinNodes
	switch {
	case room <= 0 || in.InFlightNodes > 0:
		if in.Rules.BudgetPaces {
			why := fmt.Sprintf("the pool is at its floor of %d", p.MinNodes)
			if room > 0 {
				why = Plural(in.InFlightNodes, "machine") + " still provisioning"
			}
			d.Blocked = append(d.Blocked, fmt.Sprintf("%s to consolidate but %s", Plural(len(cands), "node"), why))
		}
		return
	case in.Now.Before(cooldownEnd):
		if len(cands) > 0 {
			d.Blocked = append(d.Blocked, fmt.Sprintf("%s to consolidate; cooldown until %s", Plural(len(cands), "node"), cooldownEnd.UTC().Format(time.RFC3339)))
			wake(cooldownEnd, "cooldown after scale-down")
		}
		return
	}
	limit := min(room, DrainSlots(in.Policy, current, draining(in)))
	if p.MaxScaleDownPerDecision > 0 {
		limit = min(limit, p.MaxScaleDownPerDecision)
	}
	if limit <= 0 && len(cands) > 0 {
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s to consolidate; the disruption budget allows no more nodes draining at once", Plural(len(cands), "node")))
		return
	}
	if p.ConsolidationDisruption == types.DisruptIdleOnly {
		cands = slices.DeleteFunc(cands, func(n types.NodeObservation) bool { return !emptyNode(n) })
	}
	remove := packElsewhere(obs, cands, limit, in.Rules.AcrossSizes, in.Rules.KeepReplacement, in.Rules.PackAnyOrder && in.Rules.KeepReplacement, d)
	if in.KeepsHeadroom != nil {
		remove = keepHeadroom(remove, in.KeepsHeadroom, d)
	}
	if len(remove) > 0 && p.ConsolidationDisruption == types.DisruptBalanced {
		remove = balancedPrefix(in, remove, d)
	}
	if len(remove) == 0 {
		if in.Rules.Replace && p.ConsolidationDisruption != types.DisruptIdleOnly {
			// k nodes replaced by one leave current-k+1: one more than
			// removal may go, within the same drain budget.
			limit := min(room+1, DrainSlots(in.Policy, current, draining(in)))
			if p.MaxScaleDownPerDecision > 0 {
				limit = min(limit, p.MaxScaleDownPerDecision)
			}
			found := replace(in, p, current, cands, limit, d)
			if !found && in.Rules.ReplaceGPU {
				found = replaceGPU(in, p, current, limit, d)
			}
			if found && p.ConsolidationDisruption == types.DisruptBalanced {
				balancedReplacement(in, d)
			}
		}
		return
	}
	d.Action = ActionScaleDown
	d.RemoveNodes = remove
	d.Reason = fmt.Sprintf("consolidation: %s below %.0f%% of allocatable for %s whose pods fit on the nodes that stay",
		Plural(len(remove), "node"), threshold*100, after)
}

// packElsewhere keeps, in order, up to limit candidates whose pods surely
// fit on the other Ready nodes of the same size (same template: labels,
// taints, GPU model), or with acrossSizes of any size sameTemplate
// admits (packInto).
func packElsewhere(obs *types.PoolObservation, cands []types.NodeObservation, limit int, acrossSizes, machineLabels, anyOrder bool, d *Decision) []string {
	admits := func(c, n types.NodeObservation) bool {
		return n.Size == c.Size || acrossSizes && n.Allocatable.MilliCPU >= c.Allocatable.MilliCPU && sameTemplate(c, n, machineLabels)
	}
	where := func(c types.NodeObservation) string {
		if acrossSizes {
			return "the other nodes that admit them"
		}
		return "the other " + c.Size + " nodes"
	}
	var lands func(c, n types.NodeObservation) bool
	if anyOrder {
		// The scheduler is not held to larger sizes: any node of the
		// template may take a pod of the set.
		lands = func(c, n types.NodeObservation) bool {
			return n.Size == c.Size || acrossSizes && sameTemplate(c, n, machineLabels)
		}
	}
	return packInto(obs, cands, limit, admits, lands, where, "consolidated", d)
}

// packInto keeps, in order, up to limit candidates whose pods surely fit
// on the other Ready nodes admits allows: each of its pods is taken to be
// as large as its largest, and that many slots must fit the free room
// left, first fit in node order, which holds whatever the pods really are
// and wherever the scheduler puts them. Room a removal takes is gone for
// the next, and a node that receives pods is not removed in the same
// decision. With lands (Rules.PackAnyOrder: the nodes whose room counts
// for a candidate's pods wherever the scheduler sends them), the
// removals must also hold as a set for any scheduler (anyOrderSet).
func packInto(obs *types.PoolObservation, cands []types.NodeObservation, limit int, admits, lands func(c, n types.NodeObservation) bool, where func(c types.NodeObservation) string, verb string, d *Decision) []string {
	var sure *anyOrderSet
	if lands != nil {
		sure = newAnyOrder(obs)
	}
	free := map[string]types.Resources{}
	for _, n := range obs.Nodes {
		if n.State == types.NodeReady {
			free[n.Name] = n.FreeRoom()
		}
	}
	removing, receiving := map[string]bool{}, map[string]bool{}
	var out []string
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		if receiving[c.Name] {
			continue
		}
		load := c.Requested
		if load.MilliCPU == 0 && load.Memory == 0 && load.GPUs == 0 {
			if sure != nil && !sure.try(c, types.Resources{}, 0, nil) {
				d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not %s with the others, the room it has is counted for their pods", c.Name, verb))
				continue
			}
			removing[c.Name] = true
			out = append(out, c.Name)
			continue
		}
		slot := withSlot(c.LargestPod)
		count := load.Pods
		if c.LargestPod.MilliCPU == 0 && c.LargestPod.Memory == 0 && c.LargestPod.GPUs == 0 || count <= 0 {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not %s, its pods' sizes are not known", c.Name, verb))
			continue
		}
		take := map[string]int64{}
		left := count
		for _, n := range obs.Nodes {
			if left == 0 {
				break
			}
			if n.Name == c.Name || removing[n.Name] || n.State != types.NodeReady || !admits(c, n) {
				continue
			}
			k := min(slotsIn(free[n.Name], slot, n.Allocatable.Pods > 0), left)
			if k > 0 {
				take[n.Name] = k
				left -= k
			}
		}
		if left > 0 {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not %s, its %s do not surely fit on %s", c.Name, verb, Plural(int(count), "pod"), where(c)))
			continue
		}
		if sure != nil && !sure.try(c, slot, count, func(n types.NodeObservation) bool { return n.Name != c.Name && lands(c, n) }) {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not %s with the others, its %s might not find room wherever the scheduler puts theirs", c.Name, verb, Plural(int(count), "pod")))
			continue
		}
		for name, k := range take {
			f := free[name]
			f.MilliCPU -= k * slot.MilliCPU
			f.Memory -= k * slot.Memory
			f.GPUs -= k * slot.GPUs
			f.EphemeralStorage -= k * slot.EphemeralStorage
			f.Pods -= k
			free[name] = f
			receiving[name] = true
		}
		removing[c.Name] = true
		out = append(out, c.Name)
	}
	return out
}

// slotsIn counts how many copies of slot fit in free; countPods: the node
// bounds its pod slots.
func slotsIn(free, slot types.Resources, countPods bool) int64 {
	k := int64(1 << 40)
	for _, dim := range [][2]int64{{free.MilliCPU, slot.MilliCPU}, {free.Memory, slot.Memory}, {free.GPUs, slot.GPUs}, {free.EphemeralStorage, slot.EphemeralStorage}} {
		if dim[1] > 0 {
			k = min(k, max(0, dim[0])/dim[1])
		}
	}
	if countPods {
		k = min(k, max(0, free.Pods))
	}
	return k
}
