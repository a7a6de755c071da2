package kubernetes

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/types"
)

var (
	observedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	apiPool    = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "do", Cluster: "c1"}
	inferPool  = types.PoolKey{Org: "acme", Project: "shop", Service: "infer", Provider: "do", Cluster: "c1"}
)

func observerConfig(metrics *metricsfake.Clientset) Config {
	cfg := Config{Cluster: "c1", Provider: "do", Now: func() time.Time { return observedAt }}
	if metrics != nil {
		cfg.Metrics = metrics
	}
	return cfg
}

// clusterWithTenants is one cluster with two pools, pods in every state the
// observer must tell apart, and a node whose pool label is malformed.
func clusterWithTenants() []runtime.Object {
	t0 := observedAt.Add(-5 * time.Minute).Truncate(time.Second)
	t1 := observedAt.Add(-time.Minute).Truncate(time.Second)
	gpu := newPod("ml", "gpu-1", tenant("acme", "shop", "infer"), unschedulable(t1))
	gpu.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		ResourceGPU: resource.MustParse("1"),
	}
	gpu.Spec.NodeSelector = map[string]string{LabelGPUProduct: "NVIDIA-L4"}
	gated := newPod("web", "gated", tenant("acme", "shop", "api"), unschedulable(t0))
	gated.Status.Conditions[0].Reason = corev1.PodReasonSchedulingGated
	apiPoolLabel := apiPool.NodePoolLabel()
	return []runtime.Object{
		newNode("n1", apiPoolLabel),
		newNode("n2", apiPoolLabel, cordoned()),
		newNode("n4", apiPoolLabel, deleting()),
		newNode("n3", inferPool.NodePoolLabel(), notReady()),
		newNode("bad", "acme.shop"),
		newNode("unpooled", ""),

		newPod("web", "pend-b", tenant("acme", "shop", "api"), unschedulable(t1), requesting("500m", "1Gi")),
		newPod("web", "pend-a", tenant("acme", "shop", "api"), unschedulable(t0), requesting("250m", "512Mi")),
		gpu,
		newPod("misc", "orphan", labelled(types.LabelOrg, "acme"), unschedulable(t0), requesting("1", "1Gi")),
		gated,

		newPod("web", "app", onNode("n1"), requesting("1", "2Gi")),
		newPod("web", "starting", onNode("n1"), phase(corev1.PodPending), requesting("250m", "256Mi")),
		newPod("web", "done", onNode("n1"), phase(corev1.PodSucceeded), requesting("3", "3Gi")),
		newPod("kube-system", "agent", onNode("n1"), ownedBy("DaemonSet"), requesting("100m", "100Mi")),
		newPod("kube-system", "etcd-n1", onNode("n1"), mirror(), requesting("200m", "200Mi")),
		newPod("web", "app-2", onNode("n2"), requesting("500m", "512Mi")),
	}
}

func TestObserveClusterAttributesPodsAndMeasuresNodes(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{}, clusterWithTenants()...)
	metrics := metricsfake.NewSimpleClientset()
	require.NoError(t, metrics.Tracker().Create(metricsv1beta1.SchemeGroupVersion.WithResource("nodes"), &metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{types.LabelPool: apiPool.NodePoolLabel()}},
		Usage:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}, ""))
	obs := NewObserver(client, observerConfig(metrics))

	got, err := obs.ObserveCluster(context.Background())
	require.NoError(t, err)

	assert.Equal(t, "c1", got.Cluster)
	assert.Equal(t, observedAt, got.ObservedAt)
	require.Len(t, got.Pools, 2)

	api := got.Pools[apiPool.WorkflowID()]
	assert.Equal(t, apiPool, api.Pool)
	assert.Equal(t, observedAt, api.ObservedAt)
	require.Len(t, api.PendingPods, 2)
	assert.Equal(t, types.PendingPod{
		Namespace: "web", Name: "pend-a", Org: "acme", Project: "shop", Service: "api",
		Requests: types.Resources{MilliCPU: 250, Memory: 512 * types.MiB, Pods: 1},
		// Labels other pods' selectors may match; the tenant ones are the fields above.
		Scheduling:         &types.PodScheduling{Labels: map[string]string{"app": "pend-a"}},
		UnschedulableSince: observedAt.Add(-5 * time.Minute),
	}, api.PendingPods[0], "pending time counts from the scheduler's transition")
	assert.Equal(t, "pend-b", api.PendingPods[1].Name)
	assert.Equal(t, observedAt.Add(-time.Minute), api.PendingPods[1].UnschedulableSince)

	require.Len(t, api.Nodes, 3)
	n1, n2, n4 := api.Nodes[0], api.Nodes[1], api.Nodes[2]
	assert.Equal(t, []string{"n1", "n2", "n4"}, []string{n1.Name, n2.Name, n4.Name})
	assert.Equal(t, types.NodeObservation{
		Name: "n1", ProviderID: "fake://n1", Size: "s-4vcpu-8gb", State: types.NodeReady,
		CreatedAt:   time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Allocatable: types.Resources{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 110},
		// app + the bound, still-starting pod; not the DaemonSet, mirror or finished pods.
		Requested: types.Resources{MilliCPU: 1250, Memory: 2*types.GiB + 256*types.MiB, Pods: 2},
		Usage:     &types.Resources{MilliCPU: 300, Memory: types.GiB},
		// The biggest pod a drain would move (the app), for scale-down's room check.
		LargestPod: types.Resources{MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1},
		// The DaemonSet and mirror pods hold room no other pod can have.
		Reserved: types.Resources{MilliCPU: 300, Memory: 300 * types.MiB, Pods: 2},
		Labels:   map[string]string{LabelInstanceType: "s-4vcpu-8gb", types.LabelPool: apiPool.NodePoolLabel()},
		// The two pods a drain would move, neither tolerating any taint.
		PodTolerations: []types.PodTolerations{{Pod: "web/app", Count: 2}},
	}, n1)
	assert.InDelta(t, 1250.0/4000, n1.CPUUtilization(), 1e-9)
	assert.Equal(t, types.NodeCordoned, n2.State)
	assert.Equal(t, int64(500), n2.Requested.MilliCPU)
	assert.Nil(t, n2.Usage, "no metrics for n2")
	assert.Equal(t, types.NodeDeleting, n4.State)

	infer := got.Pools[inferPool.WorkflowID()]
	require.Len(t, infer.Nodes, 1)
	assert.Equal(t, types.NodeNotReady, infer.Nodes[0].State)
	require.Len(t, infer.PendingPods, 1)
	assert.Equal(t, "NVIDIA-L4", infer.PendingPods[0].GPUModel)
	assert.Equal(t, types.Resources{MilliCPU: 8000, Memory: 64 * types.GiB, GPUs: 1, Pods: 1}, infer.PendingPods[0].Requests)

	require.Len(t, got.Unattributed, 1, "the scheduling-gated pod is not unschedulable demand")
	assert.Equal(t, "misc/orphan", got.Unattributed[0].Key())

	malformed := obs.MalformedNodes()
	require.Len(t, malformed, 1)
	assert.Contains(t, malformed[0], "bad: ")
	assert.Contains(t, malformed[0], "org.project.service.provider")
}

func TestObserveClusterWithoutMetricsServerLeavesUsageUnknown(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{}, clusterWithTenants()...)
	metrics := metricsfake.NewSimpleClientset()
	metrics.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	})
	got, err := NewObserver(client, observerConfig(metrics)).ObserveCluster(context.Background())
	require.NoError(t, err)
	for _, n := range got.Pools[apiPool.WorkflowID()].Nodes {
		assert.Nil(t, n.Usage, n.Name)
	}
}

func TestObserveClusterMapsThrottlingToRateLimited(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{}, clusterWithTenants()...)
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewTooManyRequests("too many requests", 4)
	})
	_, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.Error(t, err)
	assert.Equal(t, errclass.RateLimited, errclass.Of(err))
	assert.Equal(t, 4*time.Second, errclass.RetryAfterOf(err))
	var typed *errclass.Error
	require.True(t, errors.As(err, &typed))
	assert.Equal(t, "kubernetes", typed.Provider)
}

func TestObserveClusterFollowsListPages(t *testing.T) {
	var objects []runtime.Object
	objects = append(objects, newNode("n1", apiPool.NodePoolLabel()))
	for i := range 5 {
		objects = append(objects, newPod("web", "p"+strconv.Itoa(i), onNode("n1"), requesting("100m", "1Mi")))
	}
	client, _ := kubefake.NewClientset(kubefake.Options{}, objects...)
	// Serve pods two per page, as an API server honouring limit would.
	var limits []int64
	client.PrependReactor("list", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		opts := action.(k8stesting.ListActionImpl).ListOptions
		limits = append(limits, opts.Limit)
		start := 0
		if opts.Continue != "" {
			start, _ = strconv.Atoi(opts.Continue)
		}
		page := &corev1.PodList{}
		for i := start; i < min(start+2, 5); i++ {
			page.Items = append(page.Items, *newPod("web", "p"+strconv.Itoa(i), onNode("n1"), requesting("100m", "1Mi")))
		}
		if start+2 < 5 {
			page.Continue = strconv.Itoa(start + 2)
		}
		return true, page, nil
	})
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(500), got.Pools[apiPool.WorkflowID()].Nodes[0].Requested.MilliCPU)
	assert.Equal(t, []int64{listPageSize, listPageSize, listPageSize}, limits)
}

func TestObserveClusterRejectsBadConfig(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{})
	_, err := NewObserver(client, Config{Cluster: "", Provider: "Bad_Name"}).ObserveCluster(context.Background())
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "Config.Cluster")
	assert.Contains(t, err.Error(), "Config.Provider")
	assert.Empty(t, client.Actions(), "a bad config makes no API call")
}
