package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func readyNode(name, zone string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

func appPod(name string, mutate func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
	}
	if mutate != nil {
		mutate(&p)
	}
	return p
}

func boundNodes(binds []Binding) map[string]int {
	out := map[string]int{}
	for _, b := range binds {
		out[b.Node]++
	}
	return out
}

// The case: four pods under required hostname anti-affinity on
// four nodes go to four nodes, not all to the first.
func TestBindHonoursRequiredAntiAffinityByHostname(t *testing.T) {
	anti := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}}
	}
	nodes := []corev1.Node{readyNode("n1", "a"), readyNode("n2", "a"), readyNode("n3", "b"), readyNode("n4", "b")}
	var pods []corev1.Pod
	for i := range 5 {
		pods = append(pods, appPod(fmt.Sprintf("p%d", i), anti))
	}
	binds, unschedulable := Bind(nodes, pods)
	assert.Equal(t, map[string]int{"n1": 1, "n2": 1, "n3": 1, "n4": 1}, boundNodes(binds))
	assert.Len(t, unschedulable, 1, "the fifth pod has no node left")

	// A plain pod the placed pods' terms select is kept off their nodes
	// too (the rule holds both ways).
	placedPods := []corev1.Pod{appPod("old", anti)}
	placedPods[0].Spec.NodeName = "n1"
	binds, _ = Bind(nodes[:2], append(placedPods, appPod("plain", nil)))
	assert.Equal(t, map[string]int{"n2": 1}, boundNodes(binds))
}

func TestBindHonoursZoneSpreadWithRunningPods(t *testing.T) {
	spread := func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	}
	nodes := []corev1.Node{readyNode("a1", "a"), readyNode("b1", "b")}
	running := appPod("running-0", nil)
	running.Spec.NodeName = "a1"
	running2 := appPod("running-1", nil)
	running2.Spec.NodeName = "a1"
	pods := []corev1.Pod{running, running2}
	for i := range 4 {
		pods = append(pods, appPod(fmt.Sprintf("p%d", i), spread))
	}
	binds, unschedulable := Bind(nodes, pods)
	assert.Empty(t, unschedulable)
	// Zone a holds two already: b catches up first, then they alternate.
	assert.Equal(t, map[string]int{"a1": 1, "b1": 3}, boundNodes(binds))

	// A node without the zone label takes no such pod.
	bare := readyNode("bare", "")
	delete(bare.Labels, corev1.LabelTopologyZone)
	binds, unschedulable = Bind([]corev1.Node{bare}, []corev1.Pod{appPod("p", spread)})
	assert.Empty(t, binds)
	assert.Len(t, unschedulable, 1)
}

func TestBindKeepsHostPortsApart(t *testing.T) {
	port := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	}
	binds, unschedulable := Bind([]corev1.Node{readyNode("n1", "a"), readyNode("n2", "a")},
		[]corev1.Pod{appPod("p0", port), appPod("p1", port), appPod("p2", port)})
	assert.Equal(t, map[string]int{"n1": 1, "n2": 1}, boundNodes(binds))
	assert.Len(t, unschedulable, 1)
}
