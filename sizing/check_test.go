package sizing

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// This file checks a Plan against its Request from first principles,
// without the planner's data structures: it is the oracle of the property
// and fuzz tests.

// slots is the pod slots a pod takes.
func slots(p types.PendingPod) int64 { return max(p.Requests.Pods, 1) }

func podDemand(p types.PendingPod) types.Resources {
	r := p.Requests
	r.Pods = slots(p)
	return r
}

// checkedAdd adds without wrapping, so an over-full node cannot pass by
// overflowing back under its capacity.
func checkedAdd(a, b types.Resources) (types.Resources, bool) {
	var out types.Resources
	ok := true
	add := func(x, y int64) int64 {
		if (y > 0 && x > math.MaxInt64-y) || (y < 0 && x < math.MinInt64-y) {
			ok = false
		}
		return x + y
	}
	out.MilliCPU, out.Memory = add(a.MilliCPU, b.MilliCPU), add(a.Memory, b.Memory)
	out.GPUs, out.Pods = add(a.GPUs, b.GPUs), add(a.Pods, b.Pods)
	return out, ok
}

type checkNode struct {
	room  types.Resources // capacity left for pending pods
	used  types.Resources
	gpus  int64
	model string
	pods  int
}

// usableCatalog is the entries the planner may buy: first of each name,
// sane, not excluded.
func usableCatalog(catalog []types.InstanceType, excluded []string) (usable, struck []types.InstanceType) {
	seen := map[string]bool{}
	for _, t := range catalog {
		if seen[t.Name] || unusable(t) != "" {
			seen[t.Name] = true
			continue
		}
		seen[t.Name] = true
		if slices.Contains(excluded, t.Name) {
			struck = append(struck, t)
		} else {
			usable = append(usable, t)
		}
	}
	return usable, struck
}

// mayUse restates admits: GPU pods need their model; pods without GPUs
// stay off GPU nodes while a usable size without GPUs holds them.
func mayUse(usable []types.InstanceType, p types.PendingPod, n *checkNode) bool {
	if p.Requests.GPUs > 0 {
		return p.GPUModel == "" || p.GPUModel == n.model
	}
	if n.gpus == 0 {
		return true
	}
	for _, t := range usable {
		if t.GPUs == 0 && podDemand(p).Fits(t.Allocatable()) {
			return false
		}
	}
	return true
}

// fitsAnyEmpty reports whether some size in sizes could hold p on an
// empty node.
func fitsAnyEmpty(usable, sizes []types.InstanceType, p types.PendingPod) bool {
	for _, t := range sizes {
		if mayUse(usable, p, &checkNode{gpus: t.GPUs, model: t.GPUModel}) && podDemand(p).Fits(t.Allocatable()) {
			return true
		}
	}
	return false
}

func catalogEntry(catalog []types.InstanceType, name string) (types.InstanceType, bool) {
	for _, t := range catalog {
		if t.Name == name {
			return t, true
		}
	}
	return types.InstanceType{}, false
}

// eligibleForCheck restates the rule for which existing nodes take pods.
func eligibleForCheck(req Request) map[string]*checkNode {
	count := map[string]int{}
	for _, n := range req.Existing {
		count[n.Name]++
	}
	out := map[string]*checkNode{}
	for _, n := range req.Existing {
		if count[n.Name] != 1 || n.Allocatable.IsNegative() || n.Requested.IsNegative() ||
			(n.State != types.NodeReady && n.State != types.NodeProvisioning) {
			continue
		}
		room := n.FreeRoom()
		if n.Allocatable.Pods == 0 {
			room.Pods = math.MaxInt64
		}
		t, _ := catalogEntry(req.Catalog, n.Size)
		out[n.Name] = &checkNode{room: room, gpus: n.Allocatable.GPUs, model: t.GPUModel}
	}
	return out
}

// checkPlan verifies everything a plan promises about its request; excluded
// is what PlanScaleUpExcluding was given.
func checkPlan(req Request, excluded []string, plan Plan) error {
	usable, struck := usableCatalog(req.Catalog, excluded)
	pending := map[string][]types.PendingPod{}
	for _, p := range req.Pending {
		pending[p.Key()] = append(pending[p.Key()], p)
	}
	take := func(key string) (types.PendingPod, error) {
		list := pending[key]
		if len(list) == 0 {
			return types.PendingPod{}, fmt.Errorf("pod %q reported more often than it is pending", key)
		}
		pending[key] = list[1:]
		return list[0], nil
	}

	if (plan.Size == "") != (plan.NewNodes == 0) {
		return fmt.Errorf("size %q with %d new nodes", plan.Size, plan.NewNodes)
	}
	switch {
	case plan.NewNodes < 0:
		return fmt.Errorf("negative new nodes %d", plan.NewNodes)
	case req.MaxNewNodes > 0 && plan.NewNodes > req.MaxNewNodes:
		return fmt.Errorf("%d new nodes over the limit %d", plan.NewNodes, req.MaxNewNodes)
	case req.MaxNewNodes < 0 && plan.NewNodes > 0:
		return fmt.Errorf("%d new nodes though none may be added", plan.NewNodes)
	}
	nodes := eligibleForCheck(req)
	newNodes := make([]*checkNode, plan.NewNodes)
	if plan.NewNodes > 0 {
		t, ok := catalogEntry(req.Catalog, plan.Size)
		if !ok {
			return fmt.Errorf("chosen size %q is not in the catalog", plan.Size)
		}
		if want := float64(plan.NewNodes) * t.HourlyPrice; plan.HourlyCost != want {
			return fmt.Errorf("hourly cost %v, want %d × %v = %v", plan.HourlyCost, plan.NewNodes, t.HourlyPrice, want)
		}
		for i := range newNodes {
			newNodes[i] = &checkNode{room: t.Allocatable(), gpus: t.GPUs, model: t.GPUModel}
		}
	} else if plan.HourlyCost != 0 {
		return fmt.Errorf("hourly cost %v without new nodes", plan.HourlyCost)
	}

	for _, pl := range plan.Placements {
		p, err := take(pl.Pod)
		if err != nil {
			return err
		}
		var n *checkNode
		if name, ok := strings.CutPrefix(pl.Node, ExistingNodePrefix); ok {
			n = nodes[name]
		} else if idx, ok := strings.CutPrefix(pl.Node, NewNodePrefix); ok {
			if i, err := strconv.Atoi(idx); err == nil && i >= 0 && i < len(newNodes) {
				n = newNodes[i]
			}
		}
		if n == nil {
			return fmt.Errorf("pod %s placed on %q, which is not a node of the plan", pl.Pod, pl.Node)
		}
		if p.Requests.IsNegative() {
			return fmt.Errorf("pod %s with negative requests was placed", pl.Pod)
		}
		if !mayUse(usable, p, n) {
			return fmt.Errorf("pod %s (GPUs %d, model %q) may not use %s (GPUs %d, model %q)",
				pl.Pod, p.Requests.GPUs, p.GPUModel, pl.Node, n.gpus, n.model)
		}
		used, ok := checkedAdd(n.used, podDemand(p))
		if !ok || !used.Fits(n.room) {
			return fmt.Errorf("pod %s does not fit %s: placed pods need %s (overflow=%v) of room %s", pl.Pod, pl.Node, used, !ok, n.room)
		}
		n.used = used
		n.pods++
	}
	for i, n := range newNodes {
		if n.pods == 0 {
			return fmt.Errorf("new node %d holds no pod", i)
		}
	}

	all := make([]*checkNode, 0, len(nodes)+len(newNodes))
	for _, n := range nodes {
		all = append(all, n)
	}
	all = append(all, newNodes...)
	for _, u := range plan.Unplaceable {
		p, err := take(u.Pod)
		if err != nil {
			return err
		}
		if u.Reason == "" {
			return fmt.Errorf("pod %s unplaceable without a reason", u.Pod)
		}
		if p.Requests.IsNegative() != (u.Code == CodeInvalidRequest) {
			return fmt.Errorf("pod %s with requests %+v reported %s", u.Pod, p.Requests, u.Code)
		}
		if u.Code == CodeInvalidRequest {
			continue
		}
		// First fit leaves no pod out that still fits a node of the plan.
		for _, n := range all {
			used, ok := checkedAdd(n.used, podDemand(p))
			if ok && mayUse(usable, p, n) && used.Fits(n.room) {
				return fmt.Errorf("pod %s left out (%s: %s) though it fits a node of the plan", u.Pod, u.Code, u.Reason)
			}
		}
		fits, fitsStruck := fitsAnyEmpty(usable, usable, p), fitsAnyEmpty(usable, struck, p)
		switch u.Code {
		case CodeNoFit:
			if fits || fitsStruck {
				return fmt.Errorf("pod %s reported %s but fits a catalog size", u.Pod, u.Code)
			}
		case CodeOutOfCapacity:
			if fits || !fitsStruck {
				return fmt.Errorf("pod %s reported %s but fits usable %v / excluded %v", u.Pod, u.Code, fits, fitsStruck)
			}
		case CodeCeiling, CodeOtherSize:
			if !fits {
				return fmt.Errorf("pod %s reported %s but fits no usable size", u.Pod, u.Code)
			}
		default:
			return fmt.Errorf("pod %s reported with unknown code %q", u.Pod, u.Code)
		}
	}
	for key, left := range pending {
		if len(left) > 0 {
			return fmt.Errorf("pod %s neither placed nor reported unplaceable", key)
		}
	}
	return nil
}
