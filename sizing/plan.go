package sizing

import "github.com/hanzoai/visor-fleet/types"

// Request is everything one scale-up decision sizes for.
type Request struct {
	// Pending are the pods to place; an entry with Count stands for that
	// many identical pods and is packed as such, never expanded.
	Pending []types.PendingPod
	// Existing are the pool's nodes. Free room on ready nodes, and on
	// provisioning ones (so a booting node is not bought twice), is used
	// before any new node; other states give none. A node whose
	// Allocatable.Pods is 0 did not report pod slots, and its slots are
	// then not limited.
	//
	// A node's Labels and Taints (those it will keep: the startup taints
	// not-ready, unreachable and uninitialized are ignored) decide which
	// pods it may take; a node without labels has not registered yet and
	// is judged by its size's template. Sizing does not know which pods
	// run on a node, so a pending pod whose anti-affinity or host ports
	// clash with a running one may still be "placed" on a ready node's
	// free room: callers that cannot rule that out should pass only
	// booting nodes.
	Existing []types.NodeObservation
	// Promised are pods nodes were already bought for and that wait for
	// them: they take room on Existing nodes first, as far as it holds
	// them, and never buy. Without them a booting node's room would look
	// free to the next pod, which would then buy nothing and find the
	// node taken when it comes up.
	Promised []types.PendingPod
	// ruledNodes are the Existing nodes a promised pod with pod-to-pod
	// rules takes room on (reserve).
	ruledNodes map[string]bool
	// Catalog is the sizes the pool may buy (already restricted and priced).
	Catalog []types.InstanceType
	// Template is what the pool adds to every new node: declared labels
	// and taints, region and identity labels (see Templates).
	Template TemplateOptions
	// MaxNewNodes is the ceiling headroom: 0 means unlimited, a positive
	// number caps the new nodes, and a negative number means none may be
	// added (the pool is at its ceiling; 0 cannot say that).
	MaxNewNodes int
	// FewerNodes: among sizes priced at the same rate per vCPU, GiB and
	// GPU as the cheapest plan's, buy the one that holds the pending pods
	// on the fewest nodes (then the cheapest of those), though it costs
	// more today. On a catalog whose prices are linear in size this buys
	// one node the batch fills instead of several small ones: the same
	// price per unit of capacity, fewer node-hours and less per-node
	// overhead once later pods fill it. Off, the cheapest plan wins.
	FewerNodes bool
	// Expected are pods the pool expects to go pending over the next
	// minutes (the caller's estimate: the pods its recent scale-ups
	// bought for). They buy nothing: the size is chosen for Pending and
	// Expected together, and nodes of it are bought for Pending alone,
	// when that size places every pod the plan for Pending alone places
	// (lookAhead). A batch's own fragmentation then does not buy a size
	// dearer per unit that the next batches would not fill.
	Expected []types.PendingPod
	// Objective is types.SizingNodes to buy, among the plans that leave
	// fewest pods out, the one with the fewest new nodes (then the
	// cheapest); anything else buys the cheapest plan.
	Objective string
}

// Plan is one decision: grow the pool by NewNodes nodes of Size.
type Plan struct {
	// Size is the chosen instance type; "" when no new node is needed.
	Size       string  `json:"size,omitempty"`
	NewNodes   int     `json:"newNodes"`
	HourlyCost float64 `json:"hourlyCost"`
	// Placements say where each placed pod lands, in pod-key order.
	Placements []Placement `json:"placements,omitempty"`
	// Unplaceable are the pods this plan does not place, with why.
	Unplaceable []Unplaceable `json:"unplaceable,omitempty"`
	// Alternatives are every catalog size with what it would have cost, in
	// choice order (the chosen size first); unusable sizes come last with
	// Skipped saying why.
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// Placement puts one pod on one node.
type Placement struct {
	Pod string `json:"pod"` // namespace/name
	// Node is "existing:<node name>" or "new:<index>", index counting from
	// 0 within this plan's NewNodes.
	Node string `json:"node"`
	// Count is how many of an entry's pods land there, when the pod
	// stands for several (types.PendingPod.Count); 0 otherwise.
	Count int `json:"count,omitempty"`
}

// Target prefixes of Placement.Node.
const (
	ExistingNodePrefix = "existing:"
	NewNodePrefix      = "new:"
)

// Why a pod is unplaceable. Only CodeNoFit (and CodeInvalidRequest) say
// the pool can never run the pod as it stands: a caller may park such a
// pod until the pod, the policy or the catalog changes. Every other code
// is about this decision only.
const (
	// CodeNoFit: no allowed size can ever hold the pod, whatever else is
	// pending. Reason names the exact failing constraint: a nodeSelector
	// pair no template carries ("nodeSelector disktype=nvme: no size in
	// this pool has that label"), a required node affinity no template
	// matches, a taint no toleration covers ("untolerated taint
	// gpu=true:NoSchedule on every size"), or the resource no size has
	// enough of ("needs 8 GPUs, largest allowed size g4 allocates 4").
	// Buying cannot help until the pool's sizes, labels or taints change.
	CodeNoFit = "no-fit"
	// CodeOutOfCapacity: only sizes the provider reported out of capacity
	// (see PlanScaleUpExcluding) could hold the pod.
	CodeOutOfCapacity = "out-of-capacity"
	// CodeCeiling: the pod fits the chosen size but the pool's ceiling
	// (MaxNewNodes) cut the plan short.
	CodeCeiling = "ceiling"
	// CodeOtherSize: the pod fits an allowed size, but not the one this
	// decision grows (a plan buys one size). It is not parked: the very
	// next decision sizes for it, without waiting for a cooldown.
	CodeOtherSize = "other-size"
	// CodeInvalidRequest: the pod asks for a negative amount.
	CodeInvalidRequest = "invalid-request"
)

// Unplaceable is a pod left out of the plan.
type Unplaceable struct {
	Pod    string `json:"pod"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
	// Count is how many of an entry's pods are left out, when the pod
	// stands for several (types.PendingPod.Count); 0 otherwise.
	Count int `json:"count,omitempty"`
}

// Alternative is what one size would have cost for this request.
type Alternative struct {
	Size       string  `json:"size"`
	NewNodes   int     `json:"newNodes"`
	HourlyCost float64 `json:"hourlyCost"`
	// Placed is how many pods the new nodes would hold; Left how many
	// pending pods would still not be placed anywhere.
	Placed int `json:"placed"`
	Left   int `json:"left"`
	// Skipped says why the size was not considered (bad catalog entry,
	// excluded for lack of capacity); empty when it was.
	Skipped string `json:"skipped,omitempty"`
	// Estimated: on a large request this size could not beat the chosen
	// one even at its lower bound, so it was not packed; NewNodes and
	// HourlyCost are that lower bound, Left and Placed those pods this
	// size cannot hold at all and the rest.
	Estimated bool `json:"estimated,omitempty"`
}

// PlanScaleUp chooses the size and node count for the pending pods: it
// first fills free room on existing nodes, then packs the rest first-fit
// decreasing (CPU, memory, GPUs, pod slots, less per-node overhead) onto
// new nodes of each usable size, and keeps the plan that leaves the fewest
// pods unplaced, then costs least per hour, then needs fewer nodes, then
// has the alphabetically first name. Serving every pod comes before cost
// because a plan is one size: the cheapest size that leaves pods pending
// would only defer them to the next decision, a cooldown later.
//
// GPU pods go only to nodes with GPUs (of their model, when they name
// one); pods without GPUs stay off GPU nodes unless no other size holds
// them (see admits). It never fails: pods that fit nowhere are reported in
// Plan.Unplaceable. The same input in any order gives the same plan.
func PlanScaleUp(req Request) Plan { return lookAhead(req, nil) }

// PlanScaleUpExcluding is PlanScaleUp with some sizes struck off, for when a
// provider answered errclass.InsufficientCapacity for a size: the caller
// adds that size to excluded and plans again, landing on the next best
// size. Names not in the catalog are ignored (the size may be gone).
// Excluded sizes stay in Alternatives with Skipped set, and pods only they
// could hold are reported with CodeOutOfCapacity.
func PlanScaleUpExcluding(req Request, excluded []string) Plan {
	return lookAhead(req, excluded)
}
