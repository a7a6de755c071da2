package kubernetes_test

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

// Every constraint kind, written to a real API server (so defaulting and
// admission apply, e.g. the default not-ready tolerations and the node's
// not-ready taint), observed, and planned: for each kind one pod that a
// template holds and one that none can, with the exact reason.
func TestIntegrationObservedConstraintsArePlannedAsTheSchedulerFilters(t *testing.T) {
	e := newEnv(t)
	api := e.poolOf("api")
	since := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	affinity := func(key string, op corev1.NodeSelectorOperator, values ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}}}}
		}
	}
	selector := func(k, v string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{k: v} }
	}
	tolerate := func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "api", Effect: corev1.TaintEffectNoSchedule}}
	}
	hostPort := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9100, HostPort: 9100, Protocol: corev1.ProtocolTCP}}
	}
	antiWeb := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: web, TopologyKey: corev1.LabelHostname}}}}
	}
	spread := func(key string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: key,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: web}}
		}
	}
	pods := map[string][]podOption{
		"selector-fits":  {selector("disktype", "ssd"), tolerate},
		"selector-nofit": {selector("disktype", "nvme"), tolerate},
		"affinity-fits":  {affinity(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "z2"), tolerate},
		"affinity-nofit": {affinity(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "s390x"), tolerate},
		"taint-fits":     {tolerate},
		"taint-nofit":    {},
		"port-a":         {hostPort, tolerate},
		"port-b":         {hostPort, tolerate},
		"anti-a":         {labelled("app", "web"), antiWeb, tolerate},
		"anti-b":         {labelled("app", "web"), antiWeb, tolerate},
		"spread-host-a":  {labelled("app", "web"), spread(corev1.LabelHostname), tolerate},
		"spread-zone-a":  {labelled("app", "web"), spread(corev1.LabelTopologyZone), tolerate},
		"gpu-nofit": {tolerate, func(p *corev1.Pod) { // extended resources need limits equal to requests
			p.Spec.Containers[0].Resources.Requests[kubernetes.ResourceGPU] = resource.MustParse("2")
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{kubernetes.ResourceGPU: resource.MustParse("2")}
		}},
		"affinity-gt-fits": {affinity("generation", corev1.NodeSelectorOpGt, "6"), tolerate},
	}
	for name, opts := range pods {
		e.pod(name, "500m", "512Mi", append([]podOption{e.tenant(api)}, opts...)...)
		if err := kubeapi.MarkUnschedulable(e.ctx, e.admin, e.ns, name, since, "0/1 nodes are available"); err != nil {
			t.Fatal(err)
		}
	}
	// A node still booting: the API server adds its not-ready taint.
	booting := kubeapi.Node(e.ns+"-booting", "4", "8Gi", 110, withPool(api, map[string]string{
		kubernetes.LabelInstanceType: "c4", "disktype": "ssd", "generation": "7",
	}))
	booting.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "api", Effect: corev1.TaintEffectNoSchedule}}
	booting.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, err := kubeapi.CreateNode(e.ctx, e.admin, booting); err != nil {
		t.Fatal(err)
	}

	obs := e.observe().Pools[api.WorkflowID()]
	if len(obs.PendingPods) != len(pods) {
		t.Fatalf("observed %d pending pods, want %d", len(obs.PendingPods), len(pods))
	}
	var node *types.NodeObservation
	for i := range obs.Nodes {
		if obs.Nodes[i].Name == booting.Name {
			node = &obs.Nodes[i]
		}
	}
	if node == nil || node.Labels["disktype"] != "ssd" || len(node.Taints) == 0 {
		t.Fatalf("booting node observed as %+v, want its labels and taints", node)
	}
	for _, p := range obs.PendingPods {
		if (p.Scheduling == nil) != (p.Name == "taint-nofit") {
			t.Fatalf("%s: scheduling part %+v; only the pod without labels or constraints has none", p.Name, p.Scheduling)
		}
		if p.Scheduling == nil {
			continue
		}
		for _, tol := range p.Scheduling.Tolerations {
			if tol.Key == corev1.TaintNodeNotReady {
				t.Errorf("%s: the admission plugin's default toleration was captured: %+v", p.Name, tol)
			}
		}
	}

	// The booting node is full, so every pod needs a template.
	node.State, node.Requested = types.NodeProvisioning, node.Allocatable
	c4 := types.InstanceType{Name: "c4", MilliCPU: 4000, Memory: 8 * gib, MaxPods: 110, HourlyPrice: 0.1, Zones: []string{"z1", "z2"}}
	plan := sizing.PlanScaleUp(sizing.Request{Pending: obs.PendingPods, Existing: []types.NodeObservation{*node},
		Catalog: []types.InstanceType{c4, {Name: "g1", MilliCPU: 8000, Memory: 32 * gib, GPUs: 1, GPUModel: "L4", MaxPods: 110, HourlyPrice: 1}},
		Template: sizing.TemplateOptions{
			Labels: map[string]string{"disktype": "ssd", "generation": "7"},
			Taints: []types.Taint{{Key: "dedicated", Value: "api", Effect: corev1.TaintEffectNoSchedule}},
			Region: "r1", PoolLabels: api.NodeLabels(),
		}})

	wantNoFit := map[string]string{
		"selector-nofit": "nodeSelector disktype=nvme: no size in this pool has that label",
		"affinity-nofit": "required node affinity kubernetes.io/arch In [s390x]: no size in this pool matches it",
		"taint-nofit":    "untolerated taint dedicated=api:NoSchedule on every size",
		"gpu-nofit":      "needs 2 GPUs, largest allowed size g1 allocates 1",
	}
	got := map[string]string{}
	for _, u := range plan.Unplaceable {
		if u.Code != sizing.CodeNoFit {
			t.Errorf("%s: %s %q, want %s", u.Pod, u.Code, u.Reason, sizing.CodeNoFit)
		}
		got[u.Pod] = u.Reason
	}
	want := map[string]string{}
	for name, reason := range wantNoFit {
		want[e.key(name)] = reason
	}
	if !maps.Equal(got, want) {
		t.Errorf("unplaceable %v, want %v", got, want)
	}
	on := map[string]string{}
	for _, p := range plan.Placements {
		on[p.Pod] = p.Node
	}
	if plan.Size != "c4" || len(on) != len(pods)-len(wantNoFit) {
		t.Fatalf("plan %s × %d placed %d pods, want c4 holding the %d that fit", plan.Size, plan.NewNodes, len(on), len(pods)-len(wantNoFit))
	}
	for _, pair := range [][2]string{{"port-a", "port-b"}, {"anti-a", "anti-b"}} {
		if a, b := on[e.key(pair[0])], on[e.key(pair[1])]; a == b {
			t.Errorf("%s and %s share %s", pair[0], pair[1], a)
		}
	}
}
