package sim

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// resourceList renders r as a node capacity or allocatable list.
func resourceList(r types.Resources) corev1.ResourceList { return r.ResourceList() }

// requestList renders a container's requests: a pod slot is not one.
func requestList(r types.Resources) corev1.ResourceList {
	l := resourceList(r)
	delete(l, corev1.ResourcePods)
	return l
}
