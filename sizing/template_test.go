package sizing

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

func TestTemplatesCarryWellKnownAndDeclaredLabels(t *testing.T) {
	gpu := types.InstanceType{Name: "g4", MilliCPU: 8000, Memory: 32 * types.GiB, GPUs: 4, GPUModel: "A10G",
		MaxPods: 58, Arch: "arm64", Zones: []string{"us-east-1a", "us-east-1b"}}
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "aws", Cluster: "east"}
	opts := TemplateOptions{
		Labels: map[string]string{"disktype": "nvme", corev1.LabelArchStable: "lies"},
		Taints: []types.Taint{{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		Region: "us-east-1", PoolLabels: key.NodeLabels(),
	}
	got := Templates(gpu, opts)
	if len(got) != 2 || got[0].Zone != "us-east-1a" || got[1].Zone != "us-east-1b" {
		t.Fatalf("want one template per zone, got %+v", got)
	}
	want := map[string]string{
		"disktype": "nvme", corev1.LabelArchStable: "arm64", corev1.LabelOSStable: "linux",
		corev1.LabelInstanceTypeStable: "g4", corev1.LabelTopologyRegion: "us-east-1",
		corev1.LabelTopologyZone: "us-east-1b", LabelGPUProduct: "NVIDIA-A10G",
		types.LabelPool: "acme.shop.api.aws", types.LabelOrg: "acme", types.LabelProject: "shop", types.LabelService: "api",
	}
	for k, v := range want {
		if got[1].Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[1].Labels[k], v)
		}
	}
	if len(got[1].Labels) != len(want) {
		t.Errorf("labels %v, want exactly %v", got[1].Labels, want)
	}
	node := got[0].Node()
	if q := node.Status.Allocatable[types.ResourceGPU]; q.Value() != 4 {
		t.Errorf("allocatable nvidia.com/gpu = %v, want 4", q.String())
	}
	if q := node.Status.Allocatable[corev1.ResourcePods]; q.Value() != 58 {
		t.Errorf("allocatable pods = %v, want 58", q.String())
	}
	if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "gpu" {
		t.Errorf("taints %v, want the declared gpu taint", node.Spec.Taints)
	}

	plain := Templates(types.InstanceType{Name: "c1", MilliCPU: 1000, Memory: types.GiB, MaxPods: 10}, TemplateOptions{})
	if len(plain) != 1 || plain[0].Zone != "" || plain[0].Labels[corev1.LabelArchStable] != "amd64" {
		t.Fatalf("a size without zones or arch gets one amd64 template without zone, got %+v", plain)
	}
	if _, ok := plain[0].Labels[corev1.LabelTopologyZone]; ok {
		t.Error("zone label set for a size without zones")
	}
	if _, ok := plain[0].Labels[LabelGPUProduct]; ok {
		t.Error("GPU product label on a size without GPUs")
	}
}
