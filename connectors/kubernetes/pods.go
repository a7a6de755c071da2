package kubernetes

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations that change how a pod is treated.
const (
	// AnnotationMirror marks the API copy of a kubelet static pod; it cannot
	// be evicted and goes away with its node.
	AnnotationMirror = "kubernetes.io/config.mirror"
	// AnnotationSafeToEvict is cluster-autoscaler's opt-out ("false") and
	// opt-in ("true", for pods that would otherwise block) for eviction.
	AnnotationSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	// LabelGPUProduct is the GPU feature discovery label pods select a GPU model with.
	LabelGPUProduct = "nvidia.com/gpu.product"
	// LabelInstanceType is the well-known label carrying the node's size.
	LabelInstanceType = "node.kubernetes.io/instance-type"
	// labelInstanceTypeBeta is the label older clusters still set.
	labelInstanceTypeBeta = "beta.kubernetes.io/instance-type"
)

func podKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

func isMirrorPod(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[AnnotationMirror]
	return ok
}

func isDaemonSetPod(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "DaemonSet"
}

// isNodeLocal is a pod that lives and dies with its node: it neither counts
// towards the node's utilization nor is evicted by a drain.
func isNodeLocal(pod *corev1.Pod) bool { return isDaemonSetPod(pod) || isMirrorPod(pod) }

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

// evictionBlocker says why a drain must not evict the pod, or "" if it may.
// Karpenter's do-not-disrupt wins over safe-to-evict "true": a pod that
// asks not to be disrupted is never evicted by scale-down.
func evictionBlocker(pod *corev1.Pod) string {
	if pod.Annotations[AnnotationDoNotDisrupt] == "true" {
		return AnnotationDoNotDisrupt + "=true"
	}
	switch pod.Annotations[AnnotationSafeToEvict] {
	case "false":
		return AnnotationSafeToEvict + "=false"
	case "true":
		return ""
	}
	if metav1.GetControllerOf(pod) == nil {
		return "unreplicated (no controller would recreate it)"
	}
	return ""
}

// unschedulableSince says whether the pod waits for capacity, and since
// when: what "pending" means to a pool, as Karpenter counts provisionable
// pods. kube-scheduler tried it and found no node (PodScheduled=False,
// reason Unschedulable; the condition's transition time is when), and has
// not nominated a node for it (preemption is emptying room there, so a new
// node would be bought twice). A pod the scheduler has not tried yet
// carries no condition and is not pending: in a burst of thousands, each
// is tried within seconds, and buying for untried pods would buy for pods
// the nodes already there will take.
func unschedulableSince(pod *corev1.Pod) (metav1.Time, bool) {
	if pod.Status.NominatedNodeName != "" {
		return metav1.Time{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
			c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime, true
		}
	}
	return metav1.Time{}, false
}

// gpuModel is the GPU model a pod asks for: a nodeSelector on the GPU
// product label, or else a required node affinity naming exactly one.
func gpuModel(pod *corev1.Pod) string {
	if m := pod.Spec.NodeSelector[LabelGPUProduct]; m != "" {
		return m
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	model := ""
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, expr := range term.MatchExpressions {
			if expr.Key != LabelGPUProduct || expr.Operator != corev1.NodeSelectorOpIn || len(expr.Values) != 1 {
				continue
			}
			// Terms are ORed: two terms naming different models leave the
			// choice open, so no single model can be claimed.
			if model != "" && model != expr.Values[0] {
				return ""
			}
			model = expr.Values[0]
		}
	}
	return model
}

// schedulerManager is kube-scheduler's field manager name (its user agent's
// program name), as the API server records it in managed fields.
const schedulerManager = "kube-scheduler"

func isSchedulerStatusWrite(e metav1.ManagedFieldsEntry) bool {
	return e.Manager == schedulerManager && e.Subresource == "status" && e.Time != nil
}

// schedulerTriedAt is when kube-scheduler last wrote the pod's scheduling
// status (the time of its status entry in the pod's managed fields), zero
// when unknown. The scheduler writes the PodScheduled condition only when
// it changes, and its message counts the cluster's nodes ("0/12 nodes are
// available: ..."), so a write after a node joined means the scheduler
// tried the pod with that node there. In a burst of thousands it may not
// retry a pod for minutes: a pod pending beside a roomy new node was not
// refused by it until a try after the node is on record.
func schedulerTriedAt(pod *corev1.Pod) time.Time {
	var at time.Time
	for _, e := range pod.ManagedFields {
		if isSchedulerStatusWrite(e) && e.Time.After(at) {
			at = e.Time.Time
		}
	}
	return at
}
