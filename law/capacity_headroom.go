package law

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// HeadroomNamespace is the namespace of the virtual pods that stand for a
// pool's headroom. No real pod reaches the law from it: the name is not
// a valid Kubernetes namespace to create ("visor:" holds a colon).
const HeadroomNamespace = "visor:headroom"

// HeadroomPods are the policy's headroom as pending pods the planner can
// size for: one per pod of each shape, named <shape>-<n>, in the pool's
// tenant, with UnschedulableSince zero so they are past any pending
// threshold from the start. They never become scheduled: callers leave
// them out of pending counts and of the no-help and runaway bookkeeping
// (see IsHeadroomPod).
func HeadroomPods(p types.Policy, key types.PoolKey) []types.PendingPod {
	var pods []types.PendingPod
	for i, h := range p.Headroom {
		shape := h.Name
		if shape == "" {
			shape = fmt.Sprintf("shape%d", i)
		}
		var sched *types.PodScheduling
		if len(h.NodeSelector) > 0 || len(h.Tolerations) > 0 {
			sched = &types.PodScheduling{NodeSelector: h.NodeSelector, Tolerations: h.Tolerations}
		}
		req := h.Requests
		if req.Pods == 0 {
			req.Pods = 1 // a pod takes a slot
		}
		for n := 0; n < h.Pods && len(pods) < types.MaxHeadroomPods; n++ {
			pods = append(pods, types.PendingPod{
				Namespace: HeadroomNamespace, Name: fmt.Sprintf("%s-%d", shape, n),
				Org: key.Org, Project: key.Project, Service: key.Service,
				Requests: req, Scheduling: sched,
			})
		}
	}
	return pods
}

// BufferNamespace is the namespace of the virtual pods that stand for a
// pool's CapacityBuffers; like HeadroomNamespace no real pod can have it.
const BufferNamespace = "visor:buffer"

// BufferPods are the pool's CapacityBuffers as virtual pods beside
// HeadroomPods: one per pod each buffer keeps room for, named
// <buffer namespace>.<buffer name>-<n>, in the pool's tenant, past any
// pending threshold from the start. A buffer with an error or no pods adds
// none; all together they stop at types.MaxBufferPods.
func BufferPods(buffers []types.BufferObservation, key types.PoolKey) []types.PendingPod {
	var pods []types.PendingPod
	for _, b := range buffers {
		if b.Pods <= 0 {
			continue
		}
		req := b.Requests
		if req.Pods == 0 {
			req.Pods = 1
		}
		for n := 0; n < b.Pods && len(pods) < types.MaxBufferPods; n++ {
			pods = append(pods, types.PendingPod{
				Namespace: BufferNamespace, Name: fmt.Sprintf("%s.%s-%d", b.Namespace, b.Name, n),
				Org: key.Org, Project: key.Project, Service: key.Service,
				Requests: req, GPUModel: b.GPUModel, Scheduling: b.Scheduling,
			})
		}
	}
	return pods
}

// bufferPods counts the BufferPods among pods.
func bufferPods(pods []types.PendingPod) int {
	n := 0
	for _, pod := range pods {
		if pod.Namespace == BufferNamespace {
			n++
		}
	}
	return n
}

// IsHeadroomPod reports whether a pending pod is one of HeadroomPods,
// BufferPods or a pre-warm's PrewarmPods: room kept or bought ahead,
// never a pod that waits.
func IsHeadroomPod(pod types.PendingPod) bool {
	return pod.Namespace == HeadroomNamespace || pod.Namespace == BufferNamespace || pod.Namespace == PrewarmNamespace
}

// HeadroomShortfall is the headroom pods the pool's nodes (ready and
// booting, as sizing counts them) have no room for now, checked with the
// scheduler's filters: the demand scale-up must buy for. Empty when the
// room is there or the policy keeps none.
func HeadroomShortfall(p types.Policy, key types.PoolKey, nodes []types.NodeObservation, catalog []types.InstanceType, tmpl sizing.TemplateOptions) []types.PendingPod {
	return ShortfallOf(HeadroomPods(p, key), nodes, catalog, tmpl)
}

// ShortfallOf is HeadroomShortfall for any virtual pods (HeadroomPods,
// BufferPods or both).
func ShortfallOf(pods []types.PendingPod, nodes []types.NodeObservation, catalog []types.InstanceType, tmpl sizing.TemplateOptions) []types.PendingPod {
	pods = slices.Clone(pods)
	if len(pods) == 0 {
		return nil
	}
	left := unplacedOnExisting(pods, nodes, catalog, tmpl)
	return slices.DeleteFunc(pods, func(pod types.PendingPod) bool { return !left[pod.Key()] })
}

// movedNamespace holds the stand-ins for a drained node's pods.
const movedNamespace = "visor:moved"

// maxMovedPerNode bounds the stand-in pods one drained node adds.
const maxMovedPerNode = 110

// KeepsHeadroom reports whether removing the named nodes keeps the
// headroom: the remaining nodes must hold both the headroom pods and what
// the removed nodes run, taken pessimistically as pods of each removed
// node's largest pod until its requests are covered. When it does not,
// reason says which headroom pods would lose their room.
func KeepsHeadroom(p types.Policy, key types.PoolKey, nodes []types.NodeObservation, remove []string, catalog []types.InstanceType, tmpl sizing.TemplateOptions) (bool, string) {
	return KeepsRoomFor(HeadroomPods(p, key), nodes, remove, catalog, tmpl)
}

// KeepsRoomFor is KeepsHeadroom for any virtual pods (HeadroomPods,
// BufferPods or both).
func KeepsRoomFor(headroom []types.PendingPod, nodes []types.NodeObservation, remove []string, catalog []types.InstanceType, tmpl sizing.TemplateOptions) (bool, string) {
	if len(headroom) == 0 {
		return true, ""
	}
	gone := map[string]bool{}
	for _, n := range remove {
		gone[n] = true
	}
	var remaining []types.NodeObservation
	pods := slices.Clone(headroom)
	for _, n := range nodes {
		if !gone[n.Name] {
			remaining = append(remaining, n)
			continue
		}
		pods = append(pods, movedPods(n)...)
	}
	left := unplacedOnExisting(pods, remaining, catalog, tmpl)
	var short []string
	for _, pod := range headroom {
		if left[pod.Key()] {
			short = append(short, pod.Name)
		}
	}
	// Moved pods that find no room take headroom's place just the same.
	movedLeft := 0
	for k := range left {
		if strings.HasPrefix(k, movedNamespace+"/") {
			movedLeft++
		}
	}
	if len(short) == 0 && movedLeft == 0 {
		return true, ""
	}
	if len(short) > 3 {
		short = append(short[:3], fmt.Sprintf("and %d more", len(short)-3))
	}
	if len(short) == 0 {
		return false, fmt.Sprintf("removing %s leaves no room for its pods beside the headroom", strings.Join(remove, ", "))
	}
	return false, fmt.Sprintf("removing %s leaves no room for headroom %s", strings.Join(remove, ", "), strings.Join(short, ", "))
}

// movedPods stands in for what a drained node runs: copies of its largest
// pod until they cover its requests.
func movedPods(n types.NodeObservation) []types.PendingPod {
	r, big := n.Requested, n.LargestPod
	if r.MilliCPU <= 0 && r.Memory <= 0 && r.GPUs <= 0 {
		return nil
	}
	if big.MilliCPU <= 0 && big.Memory <= 0 {
		big = r
	}
	count := max(ceilDiv(r.MilliCPU, big.MilliCPU), ceilDiv(r.Memory, big.Memory), 1)
	count = min(count, maxMovedPerNode)
	big.Pods = 1
	out := make([]types.PendingPod, count)
	for i := range out {
		out[i] = types.PendingPod{Namespace: movedNamespace, Name: fmt.Sprintf("%s-%d", n.Name, i), Requests: big}
	}
	return out
}

func ceilDiv(a, b int64) int {
	if b <= 0 || a <= 0 {
		return 0
	}
	return int((a + b - 1) / b)
}

// unplacedOnExisting plans the pods onto the nodes' free room only (no
// new node allowed) and returns the keys of those left over.
func unplacedOnExisting(pods []types.PendingPod, nodes []types.NodeObservation, catalog []types.InstanceType, tmpl sizing.TemplateOptions) map[string]bool {
	plan := sizing.PlanScaleUp(sizing.Request{Pending: pods, Existing: nodes, Catalog: catalog, Template: tmpl, MaxNewNodes: -1})
	left := make(map[string]bool, len(plan.Unplaceable))
	for _, u := range plan.Unplaceable {
		left[u.Pod] = true
	}
	return left
}
