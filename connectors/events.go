package connectors

import "context"

// ClusterEvent is a Kubernetes Event the pool records on one of its pods or
// nodes, so `kubectl describe` says why the pod was or was not helped and
// why a node is held, as cluster-autoscaler's TriggeredScaleUp and
// Karpenter's DisruptionBlocked do.
type ClusterEvent struct {
	// Kind is "Pod" or "Node"; Namespace is empty for a node.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Type is "Normal" or "Warning"; Reason is one CamelCase word.
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Event kinds, types and reasons the pool records.
const (
	EventKindPod  = "Pod"
	EventKindNode = "Node"

	EventNormal  = "Normal"
	EventWarning = "Warning"

	// EventTriggeredScaleUp: the pool bought a node for this pod.
	EventTriggeredScaleUp = "TriggeredScaleUp"
	// EventNotTriggerScaleUp: no node the pool may buy can hold this pod.
	EventNotTriggerScaleUp = "NotTriggerScaleUp"
	// EventDisruptionBlocked: the pool wanted this node gone and could not
	// drain it (a PodDisruptionBudget, do-not-disrupt, the drain deadline).
	EventDisruptionBlocked = "DisruptionBlocked"
)

// MaxEventsPerCall bounds one RecordEvents call: a decision about a
// thousand pods tells the first of them, not the API server's every pod.
const MaxEventsPerCall = 20

// EventRecorder records events on a cluster's objects. It is best effort,
// rate-limited and aggregated by the recorder, never a reason to fail a
// decision.
type EventRecorder interface {
	RecordEvents(ctx context.Context, events []ClusterEvent) error
}
