// Package connectors is the one contract every provider implements, learned
// from cluster-autoscaler's NodeGroup (target size is separate from deleting
// named nodes) and Karpenter's CloudProvider (typed insufficient-capacity
// errors). A new provider is one new package under connectors/: it
// implements Provider, owns its catalog, and exports a Kind that a worker
// registers with one line. Workers wrap every provider in Checked, so
// argument checks and operation names are the same for all of them.
package connectors

import (
	"context"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// IdempotencyKey is derived from durable workflow state (pool ID and
// decision sequence), so a retried or replayed call is recognised by the
// provider side and never provisions or deletes twice.
type IdempotencyKey string

// InstanceState is a provider-side machine's life stage.
type InstanceState string

const (
	InstanceCreating InstanceState = "creating"
	InstanceRunning  InstanceState = "running"
	InstanceDeleting InstanceState = "deleting"
)

// Instance is one machine in a node group. Name is the Kubernetes node name
// the machine registers as.
type Instance struct {
	ID    string        `json:"id"`
	Name  string        `json:"name"`
	State InstanceState `json:"state"`
	// CreatedAt is when the provider launched the machine; zero if the
	// provider does not say. A registration timeout counts from it.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// EndedAt is when the provider terminated the machine: set only on a
	// NodeGroup's Ended machines.
	EndedAt time.Time `json:"endedAt,omitzero"`
}

// NodeGroup is a set of same-size machines the provider scales as one:
// a DOKS node pool, an EKS node group or ASG, a labelled set of Hetzner
// servers, a vSphere folder of clones.
type NodeGroup struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Size       string            `json:"size"`
	TargetSize int               `json:"targetSize"`
	Instances  []Instance        `json:"instances"`
	Labels     map[string]string `json:"labels,omitempty"`
	// Ended are machines of the group the provider terminated recently
	// (as far back as it keeps such a record), each with CreatedAt and
	// EndedAt. The meter bills a machine from CreatedAt to EndedAt, so a
	// machine that came and went between two reads is still billed
	// exactly. A provider that keeps no such record leaves it empty; the
	// meter then ends a machine at the first read that no longer lists it.
	Ended []Instance `json:"ended,omitempty"`
	// CapacityType and Zone are what the group was created with (empty:
	// on-demand, provider's choice of zone).
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	Zone         string             `json:"zone,omitempty"`
}

// NodeGroupSpec asks for a new node group.
type NodeGroupSpec struct {
	Pool types.PoolKey `json:"pool"`
	// Name is a hint for the group's name at the provider, never its
	// identity: a provider may use it verbatim, hash or shorten it to fit
	// its naming rules, or ignore it; empty lets it choose. The group is known by the ID
	// CreateNodeGroup returns and by the pool labels (Labels, with
	// hanzo.ai/pool); nothing may look a group up by Name.
	Name       string            `json:"name"`
	Size       string            `json:"size"`
	TargetSize int               `json:"targetSize"`
	Labels     map[string]string `json:"labels,omitempty"`
	// Taints are what the pool's policy declares for its nodes; a provider
	// that cannot set node taints at launch says so in its docs, and the
	// pool's no-help guard notices pods its nodes then refuse.
	Taints []types.Taint `json:"taints,omitempty"`
	// CapacityType is how the group's machines are bought; empty is
	// on-demand. A provider with no spot market refuses spot with a
	// permanent error naming the field.
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	// Zone pins the group's machines to one zone; empty lets the provider
	// choose (or spread) within the region.
	Zone string `json:"zone,omitempty"`
}

// Provider is the cloud side of a pool.
type Provider interface {
	// Name is the provider's short name, as in the pool key.
	Name() string
	// NodeGroups lists the groups that belong to the pool, with target
	// sizes and instances.
	NodeGroups(ctx context.Context, pool types.PoolKey) ([]NodeGroup, error)
	// SetTargetSize sets the group's absolute target. Setting the same
	// target twice is a no-op, which is what makes it retry-safe.
	SetTargetSize(ctx context.Context, groupID string, target int, key IdempotencyKey) error
	// CreateNodeGroup creates a group; a repeat with the same key returns
	// the group the first call created instead of a second one.
	CreateNodeGroup(ctx context.Context, spec NodeGroupSpec, key IdempotencyKey) (NodeGroup, error)
	// DeleteNodes deletes the named nodes and lowers the target by as
	// many, so the provider never replaces them. A name matches an
	// Instance's Name (the Kubernetes node name) or its ID, so a machine
	// that never registered as a node can be deleted too. A node already
	// gone is success.
	DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key IdempotencyKey) error
	// DeleteNodeGroup deletes the group and every machine in it. A group
	// already gone is success, which makes it retry-safe.
	DeleteNodeGroup(ctx context.Context, groupID string, key IdempotencyKey) error
	// Catalog describes the sizes this provider offers.
	Catalog(ctx context.Context) ([]types.InstanceType, error)
}

// LeakFinder is implemented by providers that can tell which machines
// carry a pool's identity (tags, labels, name prefix) but belong to none of
// the pool's node groups: machines left behind by a crash between
// "launched" and "recorded", for garbage collection.
type LeakFinder interface {
	// LeakedInstances lists the pool's machines outside all its groups.
	LeakedInstances(ctx context.Context, pool types.PoolKey) ([]Instance, error)
	// DeleteInstances terminates the given leaked machines (by Instance
	// ID). It refuses, before changing anything, an ID that is not a
	// leaked machine of the pool, so it can never delete a group member.
	// An ID already gone is success.
	DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, key IdempotencyKey) error
}

// Interruption is the provider's notice that it will take a machine back
// (a spot interruption) or advises replacing it (a rebalance
// recommendation).
type Interruption struct {
	// InstanceID or NodeName (either may be empty, not both) names the
	// machine as NodeGroups reports it.
	InstanceID string `json:"instanceID,omitempty"`
	NodeName   string `json:"nodeName,omitempty"`
	// Kind is InterruptionSpot or InterruptionRebalance.
	Kind string `json:"kind"`
	// NoticeAt is when the provider sent the notice; Deadline is when the
	// machine goes (zero for a rebalance recommendation).
	NoticeAt time.Time `json:"noticeAt"`
	Deadline time.Time `json:"deadline,omitzero"`
	// ID identifies the notice at the provider (an SQS message ID, an
	// event ID), so a notice read twice is acted on once.
	ID string `json:"id"`
}

const (
	InterruptionSpot      = "spot-interruption"
	InterruptionRebalance = "rebalance-recommendation"
)

// InterruptionSource is implemented by providers that tell ahead of time
// that they will take machines back. Interruptions returns the pool's
// notices not yet acknowledged; Acknowledge drops them (an SQS delete), so
// a crash between the two reads a notice again rather than losing it.
type InterruptionSource interface {
	Interruptions(ctx context.Context, pool types.PoolKey) ([]Interruption, error)
	Acknowledge(ctx context.Context, pool types.PoolKey, ids []string) error
}

// Observer samples one cluster: every pool's nodes and pending pods.
type Observer interface {
	ObserveCluster(ctx context.Context) (ClusterObservation, error)
}

// ChangeSource is an Observer that keeps a watch of its cluster and can
// tell, between samples, which pools' inputs may have changed.
type ChangeSource interface {
	// WatchChanges calls notify with a pool's workflow ID when one of its
	// pods became unschedulable, got scheduled or went away while pending,
	// or one of its nodes joined, left or changed state. notify must not
	// block. ok is false when the observer keeps no watch; stop ends the
	// calls.
	WatchChanges(notify func(poolID string)) (stop func(), ok bool)
}

// ClusterObservation is one sample of a whole cluster, grouped by pool.
type ClusterObservation struct {
	Cluster    string                           `json:"cluster"`
	ObservedAt time.Time                        `json:"observedAt"`
	Pools      map[string]types.PoolObservation `json:"pools"` // by pool workflow ID
	// Unattributed are pending pods missing an org/project/service label.
	Unattributed []types.PendingPod `json:"unattributed,omitempty"`
}

// DrainOptions bound a drain.
type DrainOptions struct {
	// Deadline: past it the node is uncordoned and the drain reported as
	// failed, never left half-done.
	Deadline time.Time
	// EvictionRetry is the backoff between evictions a PDB refused.
	EvictionRetry time.Duration
	// Progress is called after each step so an activity can heartbeat.
	Progress func(DrainProgress)
}

// DrainProgress is what a drain reports as it goes.
type DrainProgress struct {
	Node      string   `json:"node"`
	Cordoned  bool     `json:"cordoned"`
	Evicted   []string `json:"evicted"`
	Remaining []string `json:"remaining"`
}

// DrainResult is a finished drain.
type DrainResult struct {
	Node    string   `json:"node"`
	Evicted []string `json:"evicted"`
	Skipped []string `json:"skipped"` // DaemonSet and mirror pods
}

// Drainer cordons and empties nodes honouring PodDisruptionBudgets.
type Drainer interface {
	Drain(ctx context.Context, node string, opts DrainOptions) (DrainResult, error)
	Uncordon(ctx context.Context, node string) error
}

// Cluster bundles what a worker can do against one enrolled cluster.
type Cluster struct {
	ID       string
	Provider Provider
	Observer Observer
	Drainer  Drainer
	// Events records Kubernetes Events on the cluster's pods and nodes;
	// nil where the cluster has none to record them on.
	Events EventRecorder
	// EnrollmentToken references the cluster's enrollment token; the
	// watcher signs the observed state it reports with it. Empty: the
	// watcher reports reachability only.
	EnrollmentToken CredentialRef
}
