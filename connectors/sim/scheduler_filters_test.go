package sim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSchedulableAppliesTheSchedulersNodeFilters(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"disktype": "ssd", "generation": "7", corev1.LabelArchStable: "amd64"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	tolerateGPU := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
	affinity := func(reqs ...corev1.NodeSelectorRequirement) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}}
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want bool
	}{
		{"untolerated NoSchedule taint", corev1.PodSpec{}, false},
		{"tolerated; PreferNoSchedule never repels", corev1.PodSpec{Tolerations: tolerateGPU}, true},
		{"nodeSelector matches", corev1.PodSpec{Tolerations: tolerateGPU, NodeSelector: map[string]string{"disktype": "ssd"}}, true},
		{"nodeSelector does not", corev1.PodSpec{Tolerations: tolerateGPU, NodeSelector: map[string]string{"disktype": "nvme"}}, false},
		{"affinity Gt", corev1.PodSpec{Tolerations: tolerateGPU, Affinity: affinity(corev1.NodeSelectorRequirement{Key: "generation", Operator: corev1.NodeSelectorOpGt, Values: []string{"6"}})}, true},
		{"affinity NotIn", corev1.PodSpec{Tolerations: tolerateGPU, Affinity: affinity(corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"amd64"}})}, false},
		{"affinity DoesNotExist", corev1.PodSpec{Tolerations: tolerateGPU, Affinity: affinity(corev1.NodeSelectorRequirement{Key: "fpga", Operator: corev1.NodeSelectorOpDoesNotExist})}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := schedulable(node, &corev1.Pod{Spec: tc.spec}); got != tc.want {
				t.Errorf("schedulable = %v, want %v", got, tc.want)
			}
		})
	}
}
