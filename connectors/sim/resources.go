package sim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

// resourceList renders r as a node capacity or allocatable list.
func resourceList(r types.Resources) corev1.ResourceList {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.Memory, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(r.Pods, resource.DecimalSI),
	}
	if r.GPUs > 0 {
		l[kubernetes.ResourceGPU] = *resource.NewQuantity(r.GPUs, resource.DecimalSI)
	}
	return l
}

// requestList renders a container's requests: a pod slot is not one.
func requestList(r types.Resources) corev1.ResourceList {
	l := resourceList(r)
	delete(l, corev1.ResourcePods)
	return l
}
