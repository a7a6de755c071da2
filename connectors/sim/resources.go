package sim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hanzoai/visor-fleet/types"
)

// resourceGPU is the extended resource GPU nodes advertise.
const resourceGPU corev1.ResourceName = "nvidia.com/gpu"

// resourceList renders r as a node capacity or allocatable list.
func resourceList(r types.Resources) corev1.ResourceList {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.Memory, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(r.Pods, resource.DecimalSI),
	}
	if r.GPUs > 0 {
		l[resourceGPU] = *resource.NewQuantity(r.GPUs, resource.DecimalSI)
	}
	return l
}

// requestList renders a container's requests: a pod slot is not one.
func requestList(r types.Resources) corev1.ResourceList {
	l := resourceList(r)
	delete(l, corev1.ResourcePods)
	return l
}

func fromList(l corev1.ResourceList) types.Resources {
	return types.Resources{
		MilliCPU: l.Cpu().MilliValue(),
		Memory:   l.Memory().Value(),
		GPUs:     l.Name(resourceGPU, resource.DecimalSI).Value(),
		Pods:     l.Pods().Value(),
	}
}

// podRequests is what the pod takes from a node: its containers' requests,
// or its largest init container's if larger, plus one pod slot.
func podRequests(p *corev1.Pod) types.Resources {
	var sum, initMax types.Resources
	for _, c := range p.Spec.Containers {
		sum = sum.Add(fromList(c.Resources.Requests))
	}
	for _, c := range p.Spec.InitContainers {
		r := fromList(c.Resources.Requests)
		initMax = types.Resources{
			MilliCPU: max(initMax.MilliCPU, r.MilliCPU), Memory: max(initMax.Memory, r.Memory), GPUs: max(initMax.GPUs, r.GPUs),
		}
	}
	sum = types.Resources{
		MilliCPU: max(sum.MilliCPU, initMax.MilliCPU), Memory: max(sum.Memory, initMax.Memory), GPUs: max(sum.GPUs, initMax.GPUs),
	}
	sum.Pods = 1
	return sum
}
