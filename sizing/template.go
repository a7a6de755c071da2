package sizing

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// LabelGPUProduct is the label NVIDIA's GPU feature discovery puts on GPU
// nodes, naming the model as GPUProduct spells it.
const LabelGPUProduct = "nvidia.com/gpu.product"

// TemplateOptions say what the pool adds to every node it buys.
type TemplateOptions struct {
	// Labels and Taints are declared by the pool's policy.
	Labels map[string]string
	Taints []types.Taint
	// Region is the cluster's region (topology.kubernetes.io/region), ""
	// when unknown.
	Region string
	// PoolLabels identify the pool and its tenant (types.PoolKey.NodeLabels).
	PoolLabels map[string]string
}

// NodeTemplate is what a new node of one size will look like to the
// scheduler: one per size, or one per zone when the size names zones.
type NodeTemplate struct {
	Size string `json:"size"`
	// Zone is "" when the size names no zones.
	Zone        string            `json:"zone,omitempty"`
	Labels      map[string]string `json:"labels"`
	Taints      []types.Taint     `json:"taints,omitempty"`
	Allocatable types.Resources   `json:"allocatable"`
}

// Templates are the node templates of one size: one per zone it names, or
// a single one without a zone label when it names none.
func Templates(t types.InstanceType, opts TemplateOptions) []NodeTemplate {
	zones := t.Zones
	if len(zones) == 0 {
		zones = []string{""}
	}
	out := make([]NodeTemplate, len(zones))
	for i, zone := range zones {
		out[i] = NodeTemplate{
			Size: t.Name, Zone: zone, Labels: templateLabels(t, zone, opts),
			Taints: opts.Taints, Allocatable: t.Allocatable(),
		}
	}
	return out
}

// templateLabels: the pool's declared labels first, then the well-known
// ones and the pool identity, which a declaration cannot override.
func templateLabels(t types.InstanceType, zone string, opts TemplateOptions) map[string]string {
	l := make(map[string]string, len(opts.Labels)+len(opts.PoolLabels)+6)
	maps.Copy(l, opts.Labels)
	l[corev1.LabelArchStable] = t.Architecture()
	l[corev1.LabelOSStable] = "linux"
	l[corev1.LabelInstanceTypeStable] = t.Name
	if opts.Region != "" {
		l[corev1.LabelTopologyRegion] = opts.Region
	}
	if zone != "" {
		l[corev1.LabelTopologyZone] = zone
	}
	if t.GPUs > 0 && t.GPUModel != "" {
		l[LabelGPUProduct] = GPUProduct(t.GPUModel)
	}
	maps.Copy(l, opts.PoolLabels)
	return l
}

// Node is the template as a Kubernetes node, for the scheduling libraries.
func (nt NodeTemplate) Node() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "template-" + nt.Size, Labels: nt.Labels},
		Spec:       corev1.NodeSpec{Taints: coreTaints(nt.Taints)},
		Status:     corev1.NodeStatus{Allocatable: nt.Allocatable.ResourceList()},
	}
}

func coreTaints(taints []types.Taint) []corev1.Taint {
	if len(taints) == 0 {
		return nil
	}
	out := make([]corev1.Taint, len(taints))
	for i, t := range taints {
		out[i] = t.Core()
	}
	return out
}
