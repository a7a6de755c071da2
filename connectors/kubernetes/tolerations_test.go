package kubernetes

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

func withTolerations(t ...corev1.Toleration) podOption {
	return func(p *corev1.Pod) { p.Spec.Tolerations = t }
}

// The observer groups a node's evictable pods by their tolerations, most
// pods first, leaving out DefaultTolerationSeconds' own, DaemonSet pods
// and pods a drain would not move; past the bound the rest are one
// unnamed entry.
func TestObservedPodTolerations(t *testing.T) {
	web := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	nodes := []corev1.Node{*newNode("n1", "acme.web.api.sim"), *newNode("n2", "acme.web.api.sim")}
	pods := []corev1.Pod{
		*newPod("shop", "cart-1", onNode("n1"), requesting("100m", "1Gi"), withTolerations(notReady)),
		*newPod("shop", "cart-0", onNode("n1"), requesting("100m", "1Gi")),
		*newPod("web", "api-0", onNode("n1"), requesting("100m", "1Gi"), withTolerations(web, notReady)),
		*newPod("web", "api-1", onNode("n1"), requesting("100m", "1Gi"), withTolerations(web)),
		*newPod("web", "api-2", onNode("n1"), requesting("100m", "1Gi"), withTolerations(web)),
		*newPod("kube-system", "agent", onNode("n1"), requesting("100m", "1Gi"), ownedBy("DaemonSet")),
		*newPod("db", "pinned", onNode("n1"), requesting("100m", "1Gi"), annotate(AnnotationDoNotDisrupt, "true")),
	}
	for i := range types.MaxTolerationSets + 2 {
		pods = append(pods, *newPod("many", fmt.Sprintf("p%d", i), onNode("n2"), requesting("10m", "10Mi"),
			withTolerations(corev1.Toleration{Key: fmt.Sprintf("k%d", i), Operator: corev1.TolerationOpExists})))
	}
	got := roomOf(nodes, pods).tolerations
	want := []types.PodTolerations{
		{Pod: "web/api-0", Count: 3, Tolerations: []corev1.Toleration{web}},
		{Pod: "shop/cart-0", Count: 2},
	}
	if !reflect.DeepEqual(got["n1"], want) {
		t.Errorf("n1 = %+v, want %+v", got["n1"], want)
	}
	n2 := got["n2"]
	if len(n2) != types.MaxTolerationSets+1 {
		t.Fatalf("n2 has %d entries, want %d sets and the rest", len(n2), types.MaxTolerationSets)
	}
	if last := n2[len(n2)-1]; last.Pod != "" || last.Count != 2 || last.Tolerations != nil {
		t.Errorf("n2's rest = %+v, want 2 pods unnamed", last)
	}
	// The law reads them: only web's pods tolerate web's taint.
	taint := []types.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}}
	if _, bad := want[0].Untolerated(taint); bad {
		t.Error("web's pods judged not to tolerate dedicated=web:NoSchedule")
	}
	if tt, bad := want[1].Untolerated(taint); !bad || tt != taint[0] {
		t.Errorf("shop's pods tolerate %v (%v), want refused", taint, tt)
	}
}
