package types

import (
	"sort"
	"time"
)

// PendingPod is a pod the scheduler could not place, attributed to its tenant.
type PendingPod struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Org       string    `json:"org"`
	Project   string    `json:"project"`
	Service   string    `json:"service"`
	Requests  Resources `json:"requests"`
	GPUModel  string    `json:"gpuModel,omitempty"`
	// Scheduling is what the kube-scheduler's filters read from the pod
	// besides its requests; nil when the observer did not capture it.
	Scheduling *PodScheduling `json:"scheduling,omitempty"`
	// UnschedulableSince is the PodScheduled=False condition's transition
	// time: pending time counts from here, not from when we first saw it.
	UnschedulableSince time.Time `json:"unschedulableSince"`
	// TriedAt is when kube-scheduler last recorded a try of the pod (its
	// latest write of the scheduling condition), zero when unknown: a pod
	// beside a new node with room was refused by that node only if it was
	// tried after the node became Ready. A pod still waiting for its
	// first try (PoolObservation.Queued) carries its creation time.
	TriedAt time.Time `json:"triedAt,omitzero"`
	// Count > 1 makes the entry stand for that many identical pods (a
	// shape's unlisted pods, see PendingShape.UnlistedPod); 0 is one pod.
	// Observed pods never set it.
	Count int `json:"count,omitempty"`
}

// Pods is how many pods the entry stands for.
func (p PendingPod) Pods() int { return max(p.Count, 1) }

// Key is namespace/name.
func (p PendingPod) Key() string { return p.Namespace + "/" + p.Name }

// NodeState is where a node is in its life.
type NodeState string

const (
	NodeProvisioning NodeState = "provisioning" // asked for at the provider, not yet Ready
	NodeReady        NodeState = "ready"
	NodeNotReady     NodeState = "not-ready"
	NodeCordoned     NodeState = "cordoned"
	NodeDeleting     NodeState = "deleting"
)

// NodeObservation is one node of a pool as the cluster sees it.
type NodeObservation struct {
	Name       string    `json:"name"`
	ProviderID string    `json:"providerID,omitempty"`
	Size       string    `json:"size,omitempty"`
	State      NodeState `json:"state"`
	CreatedAt  time.Time `json:"createdAt"`
	// Allocatable and Requested give utilization = requests / allocatable,
	// DaemonSet and mirror pods excluded from Requested.
	Allocatable Resources `json:"allocatable"`
	Requested   Resources `json:"requested"`
	// Usage is metrics-server's measurement when it is installed.
	Usage *Resources `json:"usage,omitempty"`
	// DrainBlockers say why the node cannot be emptied (a pod that must not
	// be evicted: safe-to-evict "false", do-not-disrupt, no controller;
	// the node excluded from scale-down), at most a few; empty if it can.
	DrainBlockers []string `json:"drainBlockers,omitempty"`
	// LargestPod is the biggest request among the node's evictable pods:
	// scale-down needs room for it on another node.
	LargestPod Resources `json:"largestPod,omitempty"`
	// Reserved is what the node's own pods (DaemonSet and mirror pods)
	// request: not demand, so not in Requested or utilization, but room no
	// other pod can have.
	Reserved Resources `json:"reserved,omitempty"`
	// DisruptionCost weighs what draining the node disrupts, for the
	// balanced consolidation policy (Policy.ConsolidationDisruption): the
	// sum over its evictable pods of a weight that grows with the pod's
	// priority and controller.kubernetes.io/pod-deletion-cost. Zero: each
	// pod weighs one.
	DisruptionCost float64 `json:"disruptionCost,omitempty"`
	// Labels and Taints are the node's own, once it has registered; a
	// node the provider is still booting has none, and sizing then
	// assumes its size's template.
	Labels map[string]string `json:"labels,omitempty"`
	Taints []Taint           `json:"taints,omitempty"`
	// ReadyChangedAt is when the node's Ready condition last changed (its
	// lastTransitionTime; zero when the observer did not say): a node
	// NotReady is so since then, however late the pool first saw it.
	ReadyChangedAt time.Time `json:"readyChangedAt,omitzero"`
	// PodTolerations are the node's evictable pods grouped by the
	// tolerations they carry (those the DefaultTolerationSeconds admission
	// plugin adds left out), most pods first, at most MaxTolerationSets:
	// a drift that adds a taint must not drain pods onto nodes that refuse
	// them. Nil when the observer does not say (the sim), or the node has
	// no pod a drain would move.
	PodTolerations []PodTolerations `json:"podTolerations,omitempty"`
}

// IdleBelow reports whether the node is idle on every resource it offers:
// requested CPU and memory below these fractions of allocatable, and no
// GPU requested at all. A node whose GPUs are in use is busy however little
// CPU its pods ask for: draining it would evict the GPU work.
func (n NodeObservation) IdleBelow(cpu, mem float64) bool {
	return n.Requested.GPUs <= 0 && n.CPUUtilization() < cpu && n.MemoryUtilization() < mem
}

// CPUUtilization is requested / allocatable CPU in [0, 1+].
func (n NodeObservation) CPUUtilization() float64 {
	if n.Allocatable.MilliCPU <= 0 {
		return 0
	}
	return float64(n.Requested.MilliCPU) / float64(n.Allocatable.MilliCPU)
}

// MemoryUtilization is requested / allocatable memory in [0, 1+].
func (n NodeObservation) MemoryUtilization() float64 {
	if n.Allocatable.Memory <= 0 {
		return 0
	}
	return float64(n.Requested.Memory) / float64(n.Allocatable.Memory)
}

// FreeRoom is what is left on the node for more pods.
func (n NodeObservation) FreeRoom() Resources {
	f := n.Allocatable.Sub(n.Requested).Sub(n.Reserved)
	if f.MilliCPU < 0 {
		f.MilliCPU = 0
	}
	if f.Memory < 0 {
		f.Memory = 0
	}
	if f.GPUs < 0 {
		f.GPUs = 0
	}
	if f.Pods < 0 {
		f.Pods = 0
	}
	if f.EphemeralStorage < 0 {
		f.EphemeralStorage = 0
	}
	return f
}

// PoolObservation is everything the decision needs to know about one pool,
// sampled at ObservedAt.
type PoolObservation struct {
	Pool        PoolKey           `json:"pool"`
	ObservedAt  time.Time         `json:"observedAt"`
	Nodes       []NodeObservation `json:"nodes"`
	PendingPods []PendingPod      `json:"pendingPods"`
	// PendingShapes summarize every pending pod by shape, those not in
	// PendingPods too (see SummarizePending); nil in observations made
	// before shapes, whose PendingPods are then all there is.
	PendingShapes []PendingShape `json:"pendingShapes,omitempty"`
	// Reason says why the watcher sent this one ("full-state", "pod-pending", ...).
	Reason string `json:"reason,omitempty"`
	// Truncated counts pending pods and nodes left out to keep the
	// observation within the pool's bounds.
	Truncated int `json:"truncated,omitempty"`
	// Queued counts the pending pods kube-scheduler has not tried yet
	// though they waited QueuedFor in its queue, beside pods of the pool
	// it tried and refused: a burst's backlog. They are pending (counted
	// in the shapes and listed as any other, UnschedulableSince their
	// creation), and every Ready node's free room is room the scheduler
	// will offer them first.
	Queued int `json:"queued,omitempty"`
	// Unbound counts the pool's pods kube-scheduler has not placed and
	// that are not pending above: not tried yet (and not yet a backlog),
	// or nominated to a node by preemption. The room they will take is no
	// room to consolidate into, so scale-down waits while any is left.
	Unbound int `json:"unbound,omitempty"`
	// Buffers are the CapacityBuffers of the cluster that belong to the
	// pool (types.BufferObservation), bounded by BoundBuffers; nil from a
	// watcher that reads none.
	Buffers []BufferObservation `json:"buffers,omitempty"`
	// Auth is the watcher's system signature over the rest (package auth).
	Auth *SystemSignature `json:"auth,omitempty"`
}

// MaxPendingPods bounds the pending pods one observation carries, in a
// signal and in a pool's state: tens of thousands pending must stay far
// under Temporal's payload limit.
const MaxPendingPods = 2000

// KeepOldestPending keeps at most n pending pods, the longest
// unschedulable (they are due first), in key order, and counts the rest
// in Truncated. The pool sizes the rest as the first ones leave.
func (o PoolObservation) KeepOldestPending(n int) PoolObservation {
	if len(o.PendingPods) <= n {
		return o
	}
	pods := append([]PendingPod(nil), o.PendingPods...)
	sort.SliceStable(pods, func(i, j int) bool {
		if !pods[i].UnschedulableSince.Equal(pods[j].UnschedulableSince) {
			return pods[i].UnschedulableSince.Before(pods[j].UnschedulableSince)
		}
		return pods[i].Key() < pods[j].Key()
	})
	o.Truncated += len(pods) - n
	o.PendingPods = pods[:n]
	sort.Slice(o.PendingPods, func(i, j int) bool { return o.PendingPods[i].Key() < o.PendingPods[j].Key() })
	return o
}
