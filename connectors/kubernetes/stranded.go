package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/hanzoai/visor-fleet/types"
)

// strandedBlocker is the drain blocker of a pod that no other node of its
// pool admits by the pod's own rules.
const strandedBlocker = "no other node of the pool admits it (node selector, node affinity, taints or hostname anti-affinity)"

// strandedPods names, per node, the evictable pods a drain would strand:
// no other Ready, schedulable node of the same pool admits them by their
// rules as kube-scheduler's NodeAffinity, TaintToleration and
// InterPodAffinity (hostname anti-affinity) filters judge them. Room is
// the law's to judge (fitsElsewhere); rules it cannot see. Without this a
// node holding a pod pinned to its zone looks idle, is drained, and the
// pod waits for a node bought again — or forever, where the new one lands
// in another zone.
// movable are the pods a drain would evict (roomOf has judged them), pods
// all the pods, for anti-affinity.
func strandedPods(nodes []corev1.Node, pods []corev1.Pod, movable []*corev1.Pod) map[string][]string {
	poolOf := map[string]string{}
	byPool := map[string][]*corev1.Node{}
	for i := range nodes {
		n := &nodes[i]
		pool := n.Labels[types.LabelPool]
		if pool == "" {
			continue
		}
		poolOf[n.Name] = pool
		if nodeState(n) == types.NodeReady {
			byPool[pool] = append(byPool[pool], n)
		}
	}
	// Pods by node are needed only to judge anti-affinity: built only
	// when some pod has it.
	var onNode map[string][]*corev1.Pod
	for i := range pods {
		if a := pods[i].Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			onNode = map[string][]*corev1.Pod{}
			break
		}
	}
	if onNode != nil {
		for i := range pods {
			if p := &pods[i]; p.Spec.NodeName != "" && !isTerminal(p) && !isTerminating(p) {
				onNode[p.Spec.NodeName] = append(onNode[p.Spec.NodeName], p)
			}
		}
	}
	out := map[string][]string{}
	for _, p := range movable {
		node := p.Spec.NodeName
		pool, ok := poolOf[node]
		if !ok {
			continue
		}
		if !hasOtherNode(byPool[pool], node) {
			// With no other node the law's room check already keeps the
			// node: its pods fit nowhere.
			continue
		}
		if !admittedElsewhere(p, node, byPool[pool], onNode) {
			out[node] = append(out[node], podKey(p))
		}
	}
	return out
}

func hasOtherNode(nodes []*corev1.Node, own string) bool {
	for _, n := range nodes {
		if n.Name != own {
			return true
		}
	}
	return false
}

// admittedElsewhere reports whether a node of others, not the pod's own,
// admits the pod by its rules.
func admittedElsewhere(p *corev1.Pod, own string, others []*corev1.Node, onNode map[string][]*corev1.Pod) bool {
	var affinity *nodeaffinity.RequiredNodeAffinity
	if len(p.Spec.NodeSelector) > 0 || p.Spec.Affinity != nil && p.Spec.Affinity.NodeAffinity != nil {
		a := nodeaffinity.GetRequiredNodeAffinity(p)
		affinity = &a
	}
	antiAffinity := p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil
	for _, n := range others {
		if n.Name == own {
			continue
		}
		if affinity != nil {
			if ok, err := affinity.Match(n); err != nil || !ok {
				continue
			}
		}
		if TaintsRepel(n, p) {
			continue
		}
		if hostnameAntiAffinityConflict(p, antiAffinity, onNode[n.Name]) {
			continue
		}
		return true
	}
	return false
}

// TaintsRepel is kube-scheduler's TaintToleration filter: a NoSchedule or
// NoExecute taint of the node that the pod does not tolerate.
func TaintsRepel(n *corev1.Node, p *corev1.Pod) bool {
	if len(n.Spec.Taints) == 0 {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, true)
	return untolerated
}

// hostnameAntiAffinityConflict: a pod already on the node repels p, or p
// repels one, by required anti-affinity over kubernetes.io/hostname.
func hostnameAntiAffinityConflict(p *corev1.Pod, pRepels bool, there []*corev1.Pod) bool {
	for _, q := range there {
		if q == p {
			continue
		}
		if pRepels && repels(p, q) || repels(q, p) {
			return true
		}
	}
	return false
}

// repels reports whether a's required hostname anti-affinity selects b.
func repels(a, b *corev1.Pod) bool {
	if a.Spec.Affinity == nil || a.Spec.Affinity.PodAntiAffinity == nil {
		return false
	}
	for _, term := range a.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != corev1.LabelHostname || !termNamespaceHolds(term, a, b) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil || sel.Empty() && term.LabelSelector == nil {
			continue
		}
		if sel.Matches(labels.Set(b.Labels)) {
			return true
		}
	}
	return false
}

// termNamespaceHolds: a term without namespaces or a namespace selector
// applies to its own pod's namespace, as kube-scheduler reads it.
func termNamespaceHolds(term corev1.PodAffinityTerm, a, b *corev1.Pod) bool {
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		return a.Namespace == b.Namespace
	}
	for _, ns := range term.Namespaces {
		if ns == b.Namespace {
			return true
		}
	}
	// A namespace selector needs the namespaces' labels, which the
	// observer does not read: count it as applying, the safe side.
	return term.NamespaceSelector != nil
}
