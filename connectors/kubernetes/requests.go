package kubernetes

import (
	"maps"

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
	if q, ok := list[corev1.ResourceEphemeralStorage]; ok {
		r.EphemeralStorage = q.Value()
	}
	return r
}

// containerRequests is what the scheduler counts for one container: its
// requests, and for a resource with a limit but no request the limit, as
// the API server defaults it (objects built without admission, such as a
// fake client's, count the same).
func containerRequests(c *corev1.Container) types.Resources {
	if len(c.Resources.Limits) == 0 {
		return resourcesOf(c.Resources.Requests)
	}
	req := maps.Clone(c.Resources.Limits)
	maps.Copy(req, c.Resources.Requests)
	return resourcesOf(req)
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
		running = running.Add(containerRequests(&pod.Spec.Containers[i]))
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := containerRequests(c)
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

		EphemeralStorage: max(a.EphemeralStorage, b.EphemeralStorage),
	}
}
