package sizing

// gfdProducts maps the GPU models our catalogs name to the value NVIDIA's
// GPU Feature Discovery (GFD) puts in nvidia.com/gpu.product on such a
// node: the NVML product name with spaces as dashes. A catalog model
// stands for the variant its sizes carry: AWS p4d's A100 is the 40 GB
// SXM4 part, and both AWS p5 and DigitalOcean's H100 droplets have the
// 80 GB SXM5 (HBM3) part. Under MIG's "single" strategy or time-slicing
// with renaming GFD appends a suffix (-MIG-1g.5gb, -SHARED); a pool that
// runs so declares the label itself in its policy labels.
var gfdProducts = map[string]string{
	"A10":  "NVIDIA-A10",
	"A10G": "NVIDIA-A10G",
	"A100": "NVIDIA-A100-SXM4-40GB",
	"H100": "NVIDIA-H100-80GB-HBM3",
	"L4":   "NVIDIA-L4",
	"L40S": "NVIDIA-L40S",
	"T4":   "Tesla-T4",
	"V100": "Tesla-V100-SXM2-16GB",
}

// GPUProduct is the nvidia.com/gpu.product value GFD publishes on a node
// whose GPUs are of this catalog model. A model we do not know (a vSphere
// template's own spelling, a simulated model) is taken to be that value
// already, so an operator may write the GFD value as the model.
func GPUProduct(model string) string {
	if p, ok := gfdProducts[model]; ok {
		return p
	}
	return model
}

// sameGPUModel reports whether a pod asking for GPU model want may run on
// GPUs of catalog model have. Pods name a model either as the catalog
// does (types.PendingPod.GPUModel from a trace or a caller: "A10G") or as
// GFD labels it (a nodeSelector on nvidia.com/gpu.product:
// "NVIDIA-A10G"); both name the same GPUs. "" asks for any model.
func sameGPUModel(want, have string) bool {
	if want == "" || want == have {
		return true
	}
	return GPUProduct(want) == GPUProduct(have)
}
