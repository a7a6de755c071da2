// Package contract is what other services rely on: the names and payloads of
// the pool and cluster workflows' signals, updates and queries, and the
// search attributes operators filter by. It has no Temporal dependency so a
// caller can import it without pulling in the worker.
package contract

// Workflow type names.
const (
	PoolWorkflow    = "PoolWorkflow"
	ClusterWorkflow = "ClusterWorkflow"
)

// ClusterPriorityKey is the task priority a cluster workflow starts with
// (Temporal's keys run 1, first, to 5; unset is 3, as the pools have): a
// cluster's tasks, its watcher and its fan-out go ahead of its pools'
// when the task queue is backed up.
const ClusterPriorityKey = 1

// Pool workflow messages (docs/design.md, "The contract").
const (
	UpdateScale      = "scale"       // ScaleRequest -> ScaleAccepted; validated
	SignalForceScale = "force-scale" // ScaleRequest; clamped to [min, max]
	UpdateSetPolicy  = "set-policy"  // SetPolicyRequest -> PolicyAccepted; validated
	UpdatePause      = "pause"       // PauseRequest -> PoolStatus
	UpdateResume     = "resume"      // PauseRequest -> PoolStatus
	SignalObserve    = "observe"     // types.PoolObservation
	UpdateDeregister = "deregister"  // DeregisterRequest -> PoolStatus
	QueryStatus      = "status"      // -> PoolStatus
	// SignalClusterGate is sent by the cluster workflow when its phase or
	// reachability changes.
	SignalClusterGate = "cluster-gate" // ClusterGate
)

// Cluster workflow messages.
const (
	UpdateSetPhase       = "set-phase"       // SetPhaseRequest -> ClusterStatus
	UpdateReportObserved = "report-observed" // ObservedReport -> ClusterStatus; authenticated by token
	UpdateRotateToken    = "rotate-token"    // -> TokenIssued
	QueryClusterStatus   = "status"          // -> ClusterStatus
	// QueryClusterPublic is the cluster's status without its pools: the
	// only query a tenant may make of a cluster, since the pools map names
	// every org's pools on it (auth/frontend).
	QueryClusterPublic = "public-status" // -> ClusterStatus, Pools empty
)

// Default task queue of the pool and cluster workflows.
const DefaultTaskQueue = "visor-fleet"

// Search attributes (docs/design.md). The embedded server allows at most 10
// Keyword attributes per namespace; these are 9.
const (
	SAOrg          = "VisorOrg"
	SAProject      = "VisorProject"
	SAService      = "VisorService"
	SAProvider     = "VisorProvider"
	SACluster      = "VisorCluster"
	SAState        = "VisorState"
	SAClusterPhase = "VisorClusterPhase"
	SARegion       = "VisorRegion"
	SATier         = "VisorTier" // managed or byo: how the pool is billed
	SANodes        = "VisorNodes"
	SATargetNodes  = "VisorTargetNodes"
	SAPendingPods  = "VisorPendingPods"
	SALastScale    = "VisorLastScaleTime"
)

// MemoPoolReason is the pool memo key holding one short line saying why the
// pool does not act (paused, blocked, frozen, gated), or "" when it acts.
// `visor pool list` shows it without querying the workflow; the memo is
// returned with every visibility listing at no extra cost.
const MemoPoolReason = "reason"

// MemoPoolHourlyCost is the pool memo key holding what the pool's machines
// cost per hour (catalog prices after overrides), so an org's cost budget
// is checked from one listing.
const MemoPoolHourlyCost = "hourlyCost"

// SearchAttributeKind is a search attribute's indexed type.
type SearchAttributeKind string

const (
	Keyword  SearchAttributeKind = "Keyword"
	Int      SearchAttributeKind = "Int"
	Datetime SearchAttributeKind = "Datetime"
)

// SearchAttributes lists every attribute with its type, for registration.
var SearchAttributes = map[string]SearchAttributeKind{
	SAOrg: Keyword, SAProject: Keyword, SAService: Keyword, SAProvider: Keyword,
	SACluster: Keyword, SAState: Keyword, SAClusterPhase: Keyword, SARegion: Keyword,
	SATier:  Keyword,
	SANodes: Int, SATargetNodes: Int, SAPendingPods: Int, SALastScale: Datetime,
}
