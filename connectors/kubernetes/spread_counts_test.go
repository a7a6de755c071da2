package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
)

func inZone(zone string) nodeOption {
	return func(n *corev1.Node) { n.Labels[corev1.LabelTopologyZone] = zone }
}

func TestObserverCountsRunningPodsPerZoneForZoneSpread(t *testing.T) {
	since := observedAt.Add(-2 * time.Minute).Truncate(time.Second)
	web := func(name string, opts ...podOption) *corev1.Pod {
		p := newPod("web", name, append([]podOption{requesting("100m", "64Mi")}, opts...)...)
		p.Labels["app"] = "web"
		return p
	}
	pending := web("web-new", tenant("acme", "shop", "api"), unschedulable(since))
	pending.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	pool := apiPool.NodePoolLabel()
	objects := []runtime.Object{
		newNode("na", pool, inZone("z-a")), newNode("nb", pool, inZone("z-b")), newNode("nz", pool),
		web("web-1", onNode("na")), web("web-2", onNode("na")), web("web-3", onNode("nb")),
		web("web-done", onNode("nb"), phase(corev1.PodSucceeded)),
		web("web-nozone", onNode("nz")),
		newPod("web", "other-app", onNode("nb")),
		newPod("other", "web-elsewhere", onNode("nb"), labelled("app", "web")),
		pending,
	}
	client, _ := kubefake.NewClientset(kubefake.Options{}, objects...)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	api := got.Pools[apiPool.WorkflowID()]
	require.Len(t, api.PendingPods, 1)
	s := api.PendingPods[0].Scheduling
	require.NotNil(t, s)
	assert.Equal(t, []map[string]int32{nil, {"z-a": 2, "z-b": 1}}, s.ZoneSpreadPods,
		"same namespace, matching, bound to a zoned node, not finished; hostname entries not counted")
}
