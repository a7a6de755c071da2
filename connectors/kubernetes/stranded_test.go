package kubernetes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func tainted(key string) nodeOption {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
}

func selecting(key, value string) podOption {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{key: value} }
}

func tolerating(key string) podOption {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
}

func shunning(app string) podOption {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}}
	}
}

// The zone-spread case on the real scheduler: a node whose only pod is
// pinned to the node's zone looked idle, was drained, and the pod then
// waited for a node bought again in whatever zone the provider chose.
// stranded runs roomOf's check on every pod given, all of them movable.
func stranded(nodes []corev1.Node, pods []corev1.Pod) map[string][]string {
	movable := make([]*corev1.Pod, len(pods))
	for i := range pods {
		movable[i] = &pods[i]
	}
	return strandedPods(nodes, pods, movable)
}

func TestStrandedPodsBlockTheDrainThatWouldStrandThem(t *testing.T) {
	const pool, other = "acme.web.api.sim", "acme.web.db.sim"
	nodes := []corev1.Node{
		*newNode("a1", pool, inZone("a")),
		*newNode("b1", pool, inZone("b")),
		*newNode("b2", pool, inZone("b"), cordoned()),
		*newNode("c1", pool, inZone("c"), tainted("dedicated")),
		*newNode("a9", other, inZone("a")), // another pool's node is not where a drain of ours sends pods
	}
	pods := []corev1.Pod{
		*newPod("default", "early-a", onNode("a1"), requesting("100m", "128Mi"), selecting(corev1.LabelTopologyZone, "a")),
		*newPod("default", "early-b", onNode("b1"), requesting("100m", "128Mi"), selecting(corev1.LabelTopologyZone, "b")),
		*newPod("default", "free", onNode("b1"), requesting("100m", "128Mi")),
		*newPod("default", "tolerant", onNode("c1"), requesting("100m", "128Mi"), tolerating("dedicated"), selecting(corev1.LabelTopologyZone, "c")),
		*newPod("default", "solo-1", onNode("a1"), requesting("100m", "128Mi"), labelled("app", "solo"), shunning("solo")),
		*newPod("default", "solo-2", onNode("b1"), requesting("100m", "128Mi"), labelled("app", "solo"), shunning("solo")),
	}
	got := stranded(nodes, pods)
	want := map[string]string{
		// a9 is in zone a but another pool's; b2 is cordoned.
		"a1": "default/early-a",
		"b1": "default/early-b",
		// c1's pod tolerates its taint and is pinned to c: stranded too.
		"c1": "default/tolerant",
	}
	for node, pod := range want {
		if !strings.Contains(strings.Join(got[node], " "), pod) {
			t.Errorf("%s: stranded %v, want %s among them", node, got[node], pod)
		}
	}
	if strings.Contains(strings.Join(got["b1"], " "), "default/free") {
		t.Errorf("b1: stranded %v, but default/free has no rules and a1 admits it", got["b1"])
	}
	// solo-1 (a1) cannot go to b1 (solo-2 there), b2 (cordoned) or c1
	// (untolerated taint): stranded. Without solo-2 it could go to b1.
	if !strings.Contains(strings.Join(got["a1"], " "), "default/solo-1") {
		t.Errorf("a1: stranded %v, want default/solo-1 (its anti-affinity sibling holds b1)", got["a1"])
	}
	alone := stranded(nodes, pods[:5])
	if strings.Contains(strings.Join(alone["a1"], " "), "solo-1") {
		t.Errorf("a1 without solo-2: stranded %v, but b1 admits solo-1", alone["a1"])
	}
	// A pool with one node keeps the law's room check: no blocker.
	single := stranded(nodes[4:], []corev1.Pod{*newPod("default", "x", onNode("a9"), selecting(corev1.LabelTopologyZone, "a"))})
	if len(single) != 0 {
		t.Errorf("one-node pool: stranded %v, want none", single)
	}
	// And the blocker reaches the observation's drain blockers.
	if b := roomOf(nodes, pods).blockers["a1"]; !strings.Contains(strings.Join(b, "|"), "pod default/early-a: "+strandedBlocker) {
		t.Errorf("a1 drain blockers = %q", b)
	}
}
