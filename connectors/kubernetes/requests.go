package kubernetes

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// ResourceGPU is the extended resource GPU nodes advertise.
const ResourceGPU = types.ResourceGPU

// resourcesOf converts a Kubernetes resource list; pods is left to callers
// because its meaning differs between a request and a capacity.
func resourcesOf(list corev1.ResourceList) types.Resources {
	var r types.Resources
	if q, ok := list[corev1.ResourceCPU]; ok {
		r.MilliCPU = q.MilliValue()
	}
	if q, ok := list[corev1.ResourceMemory]; ok {
		r.Memory = q.Value()
	}
	if q, ok := list[ResourceGPU]; ok {
		r.GPUs = q.Value()
	}
	return r
}

// NodeAllocatable is what pods may use on the node, pod slots included.
func NodeAllocatable(node *corev1.Node) types.Resources {
	r := resourcesOf(node.Status.Allocatable)
	if q, ok := node.Status.Allocatable[corev1.ResourcePods]; ok {
		r.Pods = q.Value()
	}
	return r
}

// PodRequests is the pod's effective request as the scheduler computes it:
// regular containers and sidecars (restartable init containers) run
// together, each classic init container runs alone beside the sidecars
// started before it, the larger of the two phases counts, then pod-level
// requests override CPU and memory and the runtime overhead is added.
func PodRequests(pod *corev1.Pod) types.Resources {
	var running, sidecars, initPeak types.Resources
	for i := range pod.Spec.Containers {
		running = running.Add(resourcesOf(pod.Spec.Containers[i].Resources.Requests))
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := resourcesOf(c.Resources.Requests)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars = sidecars.Add(req)
			initPeak = maxResources(initPeak, sidecars)
			continue
		}
		initPeak = maxResources(initPeak, req.Add(sidecars))
	}
	total := maxResources(running.Add(sidecars), initPeak)
	if pod.Spec.Resources != nil {
		podLevel := resourcesOf(pod.Spec.Resources.Requests)
		if _, ok := pod.Spec.Resources.Requests[corev1.ResourceCPU]; ok {
			total.MilliCPU = podLevel.MilliCPU
		}
		if _, ok := pod.Spec.Resources.Requests[corev1.ResourceMemory]; ok {
			total.Memory = podLevel.Memory
		}
	}
	total = total.Add(resourcesOf(pod.Spec.Overhead))
	total.Pods = 1
	return total
}

func maxResources(a, b types.Resources) types.Resources {
	return types.Resources{
		MilliCPU: max(a.MilliCPU, b.MilliCPU),
		Memory:   max(a.Memory, b.Memory),
		GPUs:     max(a.GPUs, b.GPUs),
		Pods:     max(a.Pods, b.Pods),
	}
}
