package kubernetes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

func TestDrainBlockersNameWhyANodeCannotBeEmptied(t *testing.T) {
	disabled := newNode("n3", "acme.web.api.sim")
	disabled.Annotations = map[string]string{AnnotationScaleDownDisabled: "true"}
	nodes := []corev1.Node{*newNode("n1", "acme.web.api.sim"), *newNode("n2", "acme.web.api.sim"), *disabled}
	pods := []corev1.Pod{
		*newPod("default", "db", onNode("n1"), requesting("500m", "1Gi"), annotate(AnnotationSafeToEvict, "false")),
		*newPod("default", "job", onNode("n1"), requesting("100m", "1Gi"), unreplicated()),
		*newPod("default", "train", onNode("n2"), requesting("2", "4Gi"), annotate(AnnotationDoNotDisrupt, "true")),
		*newPod("default", "web-1", onNode("n2"), requesting("1", "2Gi")),
		*newPod("default", "web-2", onNode("n2"), requesting("3", "1Gi")),
		*newPod("kube-system", "agent", onNode("n2"), requesting("4", "1Gi"), ownedBy("DaemonSet")),
	}
	room := roomOf(nodes, pods)
	blockers, largest := room.blockers, room.largest
	if got := strings.Join(blockers["n1"], "|"); !strings.Contains(got, "pod default/db: cluster-autoscaler.kubernetes.io/safe-to-evict=false") ||
		!strings.Contains(got, "pod default/job: unreplicated") {
		t.Errorf("n1 blockers = %q", got)
	}
	if got := strings.Join(blockers["n2"], "|"); got != "pod default/train: karpenter.sh/do-not-disrupt=true" {
		t.Errorf("n2 blockers = %q", got)
	}
	if got := blockers["n3"]; len(got) != 1 || !strings.Contains(got[0], AnnotationScaleDownDisabled) {
		t.Errorf("n3 blockers = %q", got)
	}
	if l := largest["n2"]; l.MilliCPU != 3000 || l.Memory != types.GiB {
		t.Errorf("largest movable pod on n2 = %v (the DaemonSet pod does not move, the blocked one does not count)", l)
	}
	if r := room.reserved["n2"]; r.MilliCPU != 4000 || r.Pods != 1 {
		t.Errorf("reserved on n2 = %v, want the DaemonSet pod's request", r)
	}
}
