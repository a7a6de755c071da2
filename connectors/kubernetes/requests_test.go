package kubernetes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hanzoai/visor-fleet/types"
)

func container(cpu, memory string, gpus int64) corev1.Container {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	if gpus > 0 {
		req[ResourceGPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req}}
}

func sidecar(cpu, memory string) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c := container(cpu, memory, 0)
	c.RestartPolicy = &always
	return c
}

func TestPodRequestsFollowSchedulerRules(t *testing.T) {
	cases := []struct {
		name string
		spec corev1.PodSpec
		want types.Resources
	}{
		{
			name: "containers add up",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("250m", "256Mi", 0), container("750m", "768Mi", 1)}},
			want: types.Resources{MilliCPU: 1000, Memory: 1 * types.GiB, GPUs: 1, Pods: 1},
		},
		{
			name: "a larger init container sets the peak per resource",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("2", "128Mi", 0)},
				Containers:     []corev1.Container{container("500m", "1Gi", 0)},
			},
			want: types.Resources{MilliCPU: 2000, Memory: 1 * types.GiB, Pods: 1},
		},
		{
			name: "sidecars run beside later init containers and the app",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					sidecar("100m", "100Mi"),
					container("1", "50Mi", 0), // runs with the sidecar: 1100m
					sidecar("200m", "200Mi"),
				},
				Containers: []corev1.Container{container("500m", "500Mi", 0)}, // 800m, 800Mi with sidecars
			},
			want: types.Resources{MilliCPU: 1100, Memory: 800 * types.MiB, Pods: 1},
		},
		{
			name: "overhead is added on top",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container("1", "1Gi", 0)},
				Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")},
			},
			want: types.Resources{MilliCPU: 1250, Memory: types.GiB + 120*types.MiB, Pods: 1},
		},
		{
			name: "pod-level requests replace container CPU and memory",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container("1", "1Gi", 1)},
				Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
			},
			want: types.Resources{MilliCPU: 3000, Memory: types.GiB, GPUs: 1, Pods: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PodRequests(&corev1.Pod{Spec: tc.spec}))
		})
	}
}

func TestGPUModel(t *testing.T) {
	affinity := func(values ...[]string) *corev1.Affinity {
		var terms []corev1.NodeSelectorTerm
		for _, v := range values {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: LabelGPUProduct, Operator: corev1.NodeSelectorOpIn, Values: v,
			}}})
		}
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	cases := []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"none", corev1.PodSpec{}, ""},
		{"node selector", corev1.PodSpec{NodeSelector: map[string]string{LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}}, "NVIDIA-H100-80GB-HBM3"},
		{"affinity naming one", corev1.PodSpec{Affinity: affinity([]string{"NVIDIA-L4"})}, "NVIDIA-L4"},
		{"affinity allowing two", corev1.PodSpec{Affinity: affinity([]string{"NVIDIA-L4", "NVIDIA-A10"})}, ""},
		{"terms disagreeing", corev1.PodSpec{Affinity: affinity([]string{"NVIDIA-L4"}, []string{"NVIDIA-A10"})}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, gpuModel(&corev1.Pod{Spec: tc.spec}))
		})
	}
}
