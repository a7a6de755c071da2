package kubernetes

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// Annotations that keep a node from being scaled down.
const (
	// AnnotationDoNotDisrupt is Karpenter's pod opt-out, honoured like
	// safe-to-evict "false".
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// AnnotationScaleDownDisabled is cluster-autoscaler's node opt-out.
	AnnotationScaleDownDisabled = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
)

// maxBlockersPerNode bounds what one node reports: the first few reasons
// are enough to say why, and the observation stays small.
const maxBlockersPerNode = 3

// nodeRoom is what a node's pods say about its room beyond utilization.
type nodeRoom struct {
	// blockers say why the node cannot be emptied (pods that must not be
	// evicted, a node excluded from scale-down).
	blockers map[string][]string
	// largest is the biggest request among the pods a drain would move.
	largest map[string]types.Resources
	// reserved is what the node's own (DaemonSet, mirror) pods request.
	reserved map[string]types.Resources
	// tolerations group the pods a drain would move by their tolerations.
	tolerations map[string][]types.PodTolerations
}

// roomOf reads, per node, what the pool needs to simulate a drain before
// it starts one and to count room the node's own pods hold.
func roomOf(nodes []corev1.Node, pods []corev1.Pod) nodeRoom {
	blockers := map[string][]string{}
	largest := map[string]types.Resources{}
	reserved := map[string]types.Resources{}
	add := func(node, why string) {
		if len(blockers[node]) < maxBlockersPerNode {
			blockers[node] = append(blockers[node], why)
		}
	}
	for i := range nodes {
		if nodes[i].Annotations[AnnotationScaleDownDisabled] == "true" {
			add(nodes[i].Name, "node annotated "+AnnotationScaleDownDisabled+"=true")
		}
	}
	var movable []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		node := pod.Spec.NodeName
		if node == "" || isTerminal(pod) || isTerminating(pod) {
			continue
		}
		if isNodeLocal(pod) {
			reserved[node] = reserved[node].Add(PodRequests(pod))
			continue
		}
		if why := evictionBlocker(pod); why != "" {
			add(node, fmt.Sprintf("pod %s: %s", podKey(pod), why))
			continue
		}
		movable = append(movable, pod)
		req := PodRequests(pod)
		if l := largest[node]; req.MilliCPU > l.MilliCPU || (req.MilliCPU == l.MilliCPU && req.Memory > l.Memory) {
			largest[node] = req
		}
	}
	for node, list := range strandedPods(nodes, pods, movable) {
		sort.Strings(list)
		for _, pod := range list {
			add(node, "pod "+pod+": "+strandedBlocker)
		}
	}
	for _, list := range blockers {
		sort.Strings(list)
	}
	return nodeRoom{blockers: blockers, largest: largest, reserved: reserved, tolerations: tolerationSets(movable)}
}
