package sizing

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// gfdCases: every GPU size of the built-in catalogs (and a vSphere T4
// template), the value GPU feature discovery labels its nodes with, and the
// size a one-GPU pod selecting that value must get from its catalog.
var gfdCases = []struct {
	provider, size, product, wantSize string
}{
	{"aws", "g5.xlarge", "NVIDIA-A10G", "g5.xlarge"},
	{"aws", "g5.2xlarge", "NVIDIA-A10G", "g5.xlarge"},
	{"aws", "g5.4xlarge", "NVIDIA-A10G", "g5.xlarge"},
	{"aws", "g5.12xlarge", "NVIDIA-A10G", "g5.xlarge"},
	{"aws", "g5.48xlarge", "NVIDIA-A10G", "g5.xlarge"},
	{"aws", "p4d.24xlarge", "NVIDIA-A100-SXM4-40GB", "p4d.24xlarge"},
	{"aws", "p5.48xlarge", "NVIDIA-H100-80GB-HBM3", "p5.48xlarge"},
	{"digitalocean", "gpu-l40sx1-48gb", "NVIDIA-L40S", "gpu-l40sx1-48gb"},
	{"digitalocean", "gpu-h100x1-80gb", "NVIDIA-H100-80GB-HBM3", "gpu-h100x1-80gb"},
	{"digitalocean", "gpu-h100x8-640gb", "NVIDIA-H100-80GB-HBM3", "gpu-h100x1-80gb"},
	{"sim", "sim-gpu-8c32g-1xa10", "NVIDIA-A10", "sim-gpu-8c32g-1xa10"},
	{"vsphere", "t4-box", "Tesla-T4", "t4-box"},
}

func gfdCatalog(t *testing.T, provider string) []types.InstanceType {
	t.Helper()
	if provider == "vsphere" {
		// As the vSphere connector builds an operator's templates.
		size := func(name string, gpus int64, model string, hourly float64) types.InstanceType {
			return types.InstanceType{Name: name, Family: "vsphere", MilliCPU: 8000, Memory: 32 * types.GiB, GPUs: gpus, GPUModel: model,
				MaxPods: 110, HourlyPrice: hourly, Overhead: types.Resources{MilliCPU: 300, Memory: types.GiB, Pods: 3}}
		}
		return []types.InstanceType{size("cpu-box", 0, "", 0.1), size("t4-box", 1, "T4", 0.5)}
	}
	c, err := catalogFor(provider)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTemplatesCarryTheGPUProductGFDPublishes(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range gfdCases {
		covered[tc.provider+"/"+tc.size] = true
		var it *types.InstanceType
		for _, c := range gfdCatalog(t, tc.provider) {
			if c.Name == tc.size {
				it = &c
			}
		}
		if it == nil {
			t.Fatalf("%s has no size %s", tc.provider, tc.size)
		}
		for _, nt := range Templates(*it, TemplateOptions{}) {
			if got := nt.Labels[LabelGPUProduct]; got != tc.product {
				t.Errorf("%s %s: template %s=%q, want %q", tc.provider, tc.size, LabelGPUProduct, got, tc.product)
			}
		}
	}
	// Every GPU size of the built-in catalogs is in the table.
	for _, provider := range []string{"aws", "digitalocean", "hetzner", "sim"} {
		for _, c := range gfdCatalog(t, provider) {
			if c.GPUs > 0 && !covered[provider+"/"+c.Name] {
				t.Errorf("%s %s (model %s) has no case in gfdCases", provider, c.Name, c.GPUModel)
			}
		}
	}
}

func TestPodsSelectingTheGFDProductGetThatGPU(t *testing.T) {
	onePerProduct := map[string]bool{}
	for _, tc := range gfdCases {
		if onePerProduct[tc.provider+tc.product] {
			continue
		}
		onePerProduct[tc.provider+tc.product] = true
		catalog := gfdCatalog(t, tc.provider)
		req := types.Resources{MilliCPU: 1000, Memory: types.GiB, GPUs: 1}
		ways := map[string]types.PendingPod{
			"nodeSelector": {Namespace: "ml", Name: "p", Requests: req, GPUModel: tc.product,
				Scheduling: &types.PodScheduling{NodeSelector: map[string]string{LabelGPUProduct: tc.product}}},
			"affinity In": {Namespace: "ml", Name: "p", Requests: req, GPUModel: tc.product,
				Scheduling: affinity(requirement(LabelGPUProduct, corev1.NodeSelectorOpIn, tc.product))},
			// A caller (or a trace) that names the model without a selector.
			"GPUModel only": {Namespace: "ml", Name: "p", Requests: req, GPUModel: tc.product},
		}
		for way, pod := range ways {
			p := PlanScaleUp(Request{Pending: []types.PendingPod{pod}, Catalog: catalog})
			if p.Size != tc.wantSize || p.NewNodes != 1 || len(p.Unplaceable) != 0 {
				t.Errorf("%s %s by %s: got %d × %q, unplaceable %+v; want 1 × %s",
					tc.provider, tc.product, way, p.NewNodes, p.Size, p.Unplaceable, tc.wantSize)
			}
		}
	}
}

func TestGPUModelShortAndGFDFormsAreTheSameGPU(t *testing.T) {
	aws := gfdCatalog(t, "aws")
	for _, model := range []string{"A10G", "NVIDIA-A10G"} {
		p := PlanScaleUp(Request{Pending: []types.PendingPod{gpuPod("infer", 1, model)}, Catalog: aws})
		if p.Size != "g5.xlarge" || len(p.Unplaceable) != 0 {
			t.Errorf("GPUModel %q: got %q, unplaceable %+v; want g5.xlarge", model, p.Size, p.Unplaceable)
		}
	}
	// A GFD value of another model matches nothing of this one.
	p := PlanScaleUp(Request{Pending: []types.PendingPod{gpuPod("infer", 1, "Tesla-T4")}, Catalog: aws})
	if p.NewNodes != 0 || len(p.Unplaceable) != 1 || p.Unplaceable[0].Code != CodeNoFit {
		t.Fatalf("a T4 pod on AWS's catalog: got %d × %q, unplaceable %+v; want CodeNoFit", p.NewNodes, p.Size, p.Unplaceable)
	}
	// An existing node labelled by GFD serves a pod naming the short model.
	existing := node("gpu-1", "g5.xlarge", types.NodeReady,
		types.Resources{MilliCPU: 3800, Memory: 14 * types.GiB, GPUs: 1, Pods: 50}, types.Resources{})
	existing.Labels = map[string]string{corev1.LabelInstanceTypeStable: "g5.xlarge", LabelGPUProduct: "NVIDIA-A10G"}
	p = PlanScaleUp(Request{Pending: []types.PendingPod{gpuPod("infer", 1, "A10G")}, Catalog: aws, Existing: []types.NodeObservation{existing}})
	if p.NewNodes != 0 || len(p.Placements) != 1 || p.Placements[0].Node != ExistingNodePrefix+"gpu-1" {
		t.Fatalf("want the pod on gpu-1, got %d new, placements %+v, unplaceable %+v", p.NewNodes, p.Placements, p.Unplaceable)
	}
}

func TestGPUProduct(t *testing.T) {
	for model, want := range map[string]string{
		"A10G": "NVIDIA-A10G", "A100": "NVIDIA-A100-SXM4-40GB", "H100": "NVIDIA-H100-80GB-HBM3", "L40S": "NVIDIA-L40S",
		"A10": "NVIDIA-A10", "T4": "Tesla-T4", "L4": "NVIDIA-L4",
		// Already a GFD value, or a model we do not know: unchanged.
		"NVIDIA-A100-SXM4-80GB": "NVIDIA-A100-SXM4-80GB", "sim-t4": "sim-t4",
	} {
		if got := GPUProduct(model); got != want {
			t.Errorf("GPUProduct(%q) = %q, want %q", model, got, want)
		}
	}
}
