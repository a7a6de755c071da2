package sizing

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// referencePack is first-fit decreasing written the plain way, one pod at a
// time over a slice of nodes, with the planner's documented order: existing
// nodes by name first (pods largest first on GPUs, CPU, memory, slots),
// then new nodes of size t (pods by dominant share of t's allocatable,
// largest first, same ties). It is slow and obviously right, so the
// bucketed planner must agree with it exactly. It returns the new nodes
// used and how many valid pending pods are left unplaced.
func referencePack(req Request, t types.InstanceType, limit int) (newNodes, left int) {
	usable, _ := usableCatalog(req.Catalog, nil)
	var pods []types.PendingPod
	for _, p := range req.Pending {
		if !p.Requests.IsNegative() {
			pods = append(pods, p)
		}
	}
	canonical := func(a, b types.PendingPod) int {
		ra, rb := podDemand(a), podDemand(b)
		return cmp.Or(cmp.Compare(rb.GPUs, ra.GPUs), cmp.Compare(rb.MilliCPU, ra.MilliCPU),
			cmp.Compare(rb.Memory, ra.Memory), cmp.Compare(rb.Pods, ra.Pods), strings.Compare(gpuModel(a), gpuModel(b)))
	}
	slices.SortStableFunc(pods, canonical)

	existing := eligibleForCheck(req)
	names := make([]string, 0, len(existing))
	for name := range existing {
		names = append(names, name)
	}
	slices.Sort(names)
	var rest []types.PendingPod
	for _, p := range pods {
		placed := false
		for _, name := range names {
			if referenceTry(usable, existing[name], p) {
				placed = true
				break
			}
		}
		if !placed {
			rest = append(rest, p)
		}
	}

	alloc := t.Allocatable()
	empty := &checkNode{room: alloc, gpus: t.GPUs, model: t.GPUModel}
	var fitting []types.PendingPod
	for _, p := range rest {
		probe := *empty
		if referenceTry(usable, &probe, p) {
			fitting = append(fitting, p)
		} else {
			left++
		}
	}
	slices.SortStableFunc(fitting, func(a, b types.PendingPod) int {
		sa, sb := dominantShare(podDemand(a), alloc), dominantShare(podDemand(b), alloc)
		if sa != sb {
			return cmp.Compare(sb, sa)
		}
		return canonical(a, b)
	})
	var open []*checkNode
	for _, p := range fitting {
		placed := false
		for _, n := range open {
			if referenceTry(usable, n, p) {
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		if limit < 0 || (limit > 0 && len(open) >= limit) {
			left++
			continue
		}
		n := &checkNode{room: alloc, gpus: t.GPUs, model: t.GPUModel}
		referenceTry(usable, n, p)
		open = append(open, n)
	}
	return len(open), left
}

func gpuModel(p types.PendingPod) string {
	if p.Requests.GPUs > 0 {
		return p.GPUModel
	}
	return ""
}

// referenceTry puts p on n if it fits.
func referenceTry(usable []types.InstanceType, n *checkNode, p types.PendingPod) bool {
	if !mayUse(usable, p, n) {
		return false
	}
	used, ok := checkedAdd(n.used, podDemand(p))
	if !ok || !used.Fits(n.room) {
		return false
	}
	n.used = used
	n.pods++
	return true
}
