package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/types"
)

func disk(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(q)}
}

func TestPodRequestsCountEphemeralStorageAsTheSchedulerDoes(t *testing.T) {
	withDisk := func(c corev1.Container, q string) corev1.Container {
		c.Resources.Requests = c.Resources.Requests.DeepCopy()
		c.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse(q)
		return c
	}
	limitOnly := corev1.Container{Resources: corev1.ResourceRequirements{Limits: disk("3Gi")}}
	cases := []struct {
		name string
		spec corev1.PodSpec
		want int64
	}{
		{"containers add up", corev1.PodSpec{Containers: []corev1.Container{
			withDisk(container("100m", "64Mi", 0), "1Gi"), withDisk(container("100m", "64Mi", 0), "2Gi")}}, 3 * types.GiB},
		{"a limit without a request counts as the request", corev1.PodSpec{Containers: []corev1.Container{limitOnly}}, 3 * types.GiB},
		{"a request below its limit counts the request", corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: disk("1Gi"), Limits: disk("8Gi")}}}}, types.GiB},
		{"a larger init container sets the peak", corev1.PodSpec{
			InitContainers: []corev1.Container{withDisk(container("100m", "64Mi", 0), "10Gi")},
			Containers:     []corev1.Container{withDisk(container("100m", "64Mi", 0), "2Gi")}}, 10 * types.GiB},
		{"sidecars run beside the app", corev1.PodSpec{
			InitContainers: []corev1.Container{withDisk(sidecar("100m", "64Mi"), "1Gi")},
			Containers:     []corev1.Container{withDisk(container("100m", "64Mi", 0), "2Gi")}}, 3 * types.GiB},
		{"pod overhead is added", corev1.PodSpec{
			Containers: []corev1.Container{withDisk(container("100m", "64Mi", 0), "2Gi")},
			Overhead:   disk("512Mi")}, 2*types.GiB + 512*types.MiB},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PodRequests(&corev1.Pod{Spec: tc.spec}).EphemeralStorage)
		})
	}
}

func TestObserverCapturesEphemeralStorage(t *testing.T) {
	since := observedAt.Add(-2 * time.Minute).Truncate(time.Second)
	pending := newPod("web", "cache", tenant("acme", "shop", "api"), unschedulable(since), requesting("500m", "1Gi"))
	pending.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("30Gi")
	pending.Spec.InitContainers = []corev1.Container{{Name: "warm", Resources: corev1.ResourceRequirements{Limits: disk("40Gi")}}}
	running := newPod("web", "app", onNode("n1"), requesting("1", "2Gi"))
	running.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("5Gi")
	n1 := newNode("n1", apiPool.NodePoolLabel())
	n1.Status.Allocatable[corev1.ResourceEphemeralStorage] = resource.MustParse("72Gi")

	client, _ := kubefake.NewClientset(kubefake.Options{}, n1, pending, running)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	api := got.Pools[apiPool.WorkflowID()]
	require.Len(t, api.PendingPods, 1)
	assert.Equal(t, types.Resources{MilliCPU: 500, Memory: types.GiB, Pods: 1, EphemeralStorage: 40 * types.GiB},
		api.PendingPods[0].Requests, "the init container's disk limit is its request and the larger phase")
	require.Len(t, api.Nodes, 1)
	assert.Equal(t, 72*types.GiB, api.Nodes[0].Allocatable.EphemeralStorage)
	assert.Equal(t, 5*types.GiB, api.Nodes[0].Requested.EphemeralStorage)
	assert.Equal(t, 67*types.GiB, api.Nodes[0].FreeRoom().EphemeralStorage)
}
