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
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

func withSpec(edit func(*corev1.PodSpec)) podOption { return func(p *corev1.Pod) { edit(&p.Spec) } }

func TestObserverCapturesSchedulingConstraints(t *testing.T) {
	since := observedAt.Add(-2 * time.Minute).Truncate(time.Second)
	pending := func(name string, opts ...podOption) runtime.Object {
		return newPod("web", name, append([]podOption{tenant("acme", "shop", "api"), unschedulable(since), requesting("250m", "256Mi")}, opts...)...)
	}
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	affinity := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}}}}
	toleration := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	hostname := corev1.PodAffinityTerm{LabelSelector: web, TopologyKey: corev1.LabelHostname}
	zoneTerm := corev1.PodAffinityTerm{LabelSelector: web, TopologyKey: corev1.LabelTopologyZone}
	spreadZone := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: web}
	spreadAnyway := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: web}
	tainted := newNode("booting", apiPool.NodePoolLabel(), notReady(), func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
			{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	})
	client, _ := kubefake.NewClientset(kubefake.Options{},
		tainted,
		pending("plain"),
		pending("selector", withSpec(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"disktype": "nvme"} })),
		pending("affinity", withSpec(func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: affinity}}
		})),
		pending("tolerant", withSpec(func(s *corev1.PodSpec) { s.Tolerations = []corev1.Toleration{toleration} })),
		pending("ports", withSpec(func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		})),
		pending("anti", labelled("app", "web"), withSpec(func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  []corev1.PodAffinityTerm{hostname, zoneTerm},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: hostname}},
			}}
		})),
		pending("spread", labelled("app", "web"), withSpec(func(s *corev1.PodSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{spreadZone, spreadAnyway}
		})),
	)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	pool := got.Pools[apiPool.WorkflowID()]
	byName := map[string]*types.PodScheduling{}
	for _, p := range pool.PendingPods {
		byName[p.Name] = p.Scheduling
	}
	require.Len(t, byName, 7)

	own := func(name string) map[string]string { return map[string]string{"app": name} }
	assert.Equal(t, &types.PodScheduling{Labels: own("plain")}, byName["plain"], "labels only; tenant labels are PendingPod fields")
	assert.Equal(t, &types.PodScheduling{Labels: own("selector"), NodeSelector: map[string]string{"disktype": "nvme"}}, byName["selector"])
	assert.Equal(t, &types.PodScheduling{Labels: own("affinity"), NodeAffinity: affinity}, byName["affinity"])
	assert.Equal(t, &types.PodScheduling{Labels: own("tolerant"), Tolerations: []corev1.Toleration{toleration}}, byName["tolerant"])
	assert.Equal(t, &types.PodScheduling{Labels: own("ports"), HostPorts: []types.HostPort{{Port: 8080, Protocol: corev1.ProtocolTCP}}}, byName["ports"],
		"only ports bound on the node")
	assert.Equal(t, &types.PodScheduling{Labels: own("web"), AntiAffinity: []corev1.PodAffinityTerm{hostname}}, byName["anti"],
		"required terms on hostname only")
	assert.Equal(t, &types.PodScheduling{Labels: own("web"), TopologySpread: []corev1.TopologySpreadConstraint{spreadZone}}, byName["spread"],
		"DoNotSchedule constraints only")

	require.Len(t, pool.Nodes, 1)
	assert.Equal(t, []types.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}, pool.Nodes[0].Taints)
	assert.Equal(t, apiPool.NodePoolLabel(), pool.Nodes[0].Labels[types.LabelPool])
}

func TestPodWithoutLabelsOrConstraintsCapturesNothing(t *testing.T) {
	pod := newPod("web", "bare", unschedulable(observedAt))
	pod.Labels = map[string]string{types.LabelOrg: "acme", types.LabelProject: "shop", types.LabelService: "api"}
	assert.Nil(t, podScheduling(pod), "nothing to carry beyond the tenant fields")
}

// What the observer captures is what sizing needs: planning the observed
// pool refuses the pod no size can hold, with the exact reason, puts the
// pod that tolerates the booting node's taint on it (its not-ready taint
// goes away), and buys for the rest.
func TestObservedConstraintsPlan(t *testing.T) {
	since := observedAt.Add(-2 * time.Minute).Truncate(time.Second)
	pending := func(name string, opts ...podOption) runtime.Object {
		return newPod("web", name, append([]podOption{tenant("acme", "shop", "api"), unschedulable(since), requesting("250m", "256Mi")}, opts...)...)
	}
	booting := newNode("booting", apiPool.NodePoolLabel(), notReady(), func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
			{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	})
	client, _ := kubefake.NewClientset(kubefake.Options{}, booting,
		pending("plain"),
		pending("nvme", withSpec(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"disktype": "nvme"} })),
		pending("tolerant", withSpec(func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		})),
	)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	pool := got.Pools[apiPool.WorkflowID()]
	nodes := pool.Nodes
	nodes[0].State = types.NodeProvisioning // booting: the workflow passes it as room

	plan := sizing.PlanScaleUp(sizing.Request{Pending: pool.PendingPods, Existing: nodes, Catalog: twoSizes(),
		Template: sizing.TemplateOptions{PoolLabels: apiPool.NodeLabels()}})
	where := map[string]string{}
	for _, p := range plan.Placements {
		where[p.Pod] = p.Node
	}
	assert.Equal(t, "existing:booting", where["web/tolerant"])
	assert.Equal(t, "new:0", where["web/plain"], "the booting node's gpu taint repels it")
	require.Len(t, plan.Unplaceable, 1)
	assert.Equal(t, sizing.Unplaceable{Pod: "web/nvme", Code: sizing.CodeNoFit,
		Reason: "nodeSelector disktype=nvme: no size in this pool has that label"}, plan.Unplaceable[0])
	assert.Equal(t, 1, plan.NewNodes)
}

func TestAdmissionDefaultTolerationsAreNotConstraints(t *testing.T) {
	five := int64(300)
	pod := newPod("web", "p", unschedulable(observedAt), withSpec(func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
			{Key: "gpu", Operator: corev1.TolerationOpExists},
		}
	}))
	assert.Equal(t, []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}, podScheduling(pod).Tolerations)
}

// twoSizes is a small catalog with a flat overhead (the sim's first two
// sizes; the sim package imports this one, so its tests cannot use it).
func twoSizes() []types.InstanceType {
	over := types.Resources{MilliCPU: 200, Memory: 512 * types.MiB, Pods: 1}
	return []types.InstanceType{
		{Name: "sim-2c4g", Family: "sim", MilliCPU: 2000, Memory: 4 * types.GiB, MaxPods: 110, HourlyPrice: 0.02, Overhead: over},
		{Name: "sim-4c8g", Family: "sim", MilliCPU: 4000, Memory: 8 * types.GiB, MaxPods: 110, HourlyPrice: 0.04, Overhead: over},
	}
}
