package kubernetes_test

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

const gib = int64(1) << 30

// poolOf is the test's own pool: the org is the test's namespace, so tests
// sharing the cluster never see each other's pods and nodes in it.
func (e *env) poolOf(service string) types.PoolKey {
	return types.PoolKey{Org: e.ns, Project: "shop", Service: service, Provider: "do", Cluster: "it"}
}

func (e *env) tenant(pool types.PoolKey) podOption {
	return labelled(types.LabelOrg, pool.Org, types.LabelProject, pool.Project, types.LabelService, pool.Service)
}

func (e *env) observe() connectors.ClusterObservation {
	e.t.Helper()
	obs, err := kubernetes.NewObserver(e.connector, kubernetes.Config{Cluster: "it", Provider: "do"}).ObserveCluster(e.ctx)
	if err != nil {
		e.t.Fatalf("ObserveCluster as %s: %v", kubeapi.ConnectorUser, err)
	}
	return obs
}

func TestIntegrationObserverFindsUnschedulablePodsWithTheirTransitionTimes(t *testing.T) {
	e := newEnv(t)
	api, infer := e.poolOf("api"), e.poolOf("infer")
	// Whole seconds: the API stores condition times at that precision.
	t0 := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	t1 := time.Now().Add(-40 * time.Second).Truncate(time.Second)

	e.pod("pend-b", "500m", "1Gi", e.tenant(api))
	e.pod("pend-a", "250m", "512Mi", e.tenant(api))
	e.pod("gpu", "8", "64Gi", e.tenant(infer), func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{kubernetes.LabelGPUProduct: "NVIDIA-L4"}
	})
	e.pod("orphan", "1", "1Gi", labelled(types.LabelOrg, e.ns)) // no project or service
	e.pod("gated", "1", "1Gi", e.tenant(api), func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	})
	e.pod("fresh", "1", "1Gi", e.tenant(api)) // the scheduler has not looked at it yet
	for name, since := range map[string]time.Time{"pend-b": t1, "pend-a": t0, "gpu": t1, "orphan": t0} {
		if err := kubeapi.MarkUnschedulable(e.ctx, e.admin, e.ns, name, since, "0/3 nodes are available"); err != nil {
			t.Fatal(err)
		}
	}
	if err := kubeapi.MarkUnschedulable(e.ctx, e.admin, e.ns, "gated", t0, "gated"); err != nil {
		t.Fatal(err)
	}
	gated, err := e.admin.CoreV1().Pods(e.ns).Get(e.ctx, "gated", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	gated.Status.Conditions[0].Reason = corev1.PodReasonSchedulingGated
	if _, err := e.admin.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, gated, metaUpdate); err != nil {
		t.Fatal(err)
	}

	obs := e.observe()

	gotAPI := obs.Pools[api.WorkflowID()].PendingPods
	wantAPI := []types.PendingPod{
		{Namespace: e.ns, Name: "pend-a", Org: e.ns, Project: "shop", Service: "api",
			Requests: types.Resources{MilliCPU: 250, Memory: gib / 2, Pods: 1}, UnschedulableSince: t0},
		{Namespace: e.ns, Name: "pend-b", Org: e.ns, Project: "shop", Service: "api",
			Requests: types.Resources{MilliCPU: 500, Memory: gib, Pods: 1}, UnschedulableSince: t1},
	}
	assertPending(t, "api pool", gotAPI, wantAPI)

	gotInfer := obs.Pools[infer.WorkflowID()].PendingPods
	wantInfer := []types.PendingPod{{Namespace: e.ns, Name: "gpu", Org: e.ns, Project: "shop", Service: "infer",
		Requests: types.Resources{MilliCPU: 8000, Memory: 64 * gib, Pods: 1}, GPUModel: "NVIDIA-L4", UnschedulableSince: t1,
		Scheduling: &types.PodScheduling{NodeSelector: map[string]string{kubernetes.LabelGPUProduct: "NVIDIA-L4"}}}}
	assertPending(t, "infer pool", gotInfer, wantInfer)

	var orphans []types.PendingPod
	for _, p := range obs.Unattributed {
		if p.Namespace == e.ns {
			orphans = append(orphans, p)
		}
	}
	if len(orphans) != 1 || orphans[0].Name != "orphan" || !orphans[0].UnschedulableSince.Equal(t0) {
		t.Errorf("unattributed pods of this test = %+v, want only orphan since %s", orphans, t0)
	}
}

func assertPending(t *testing.T, what string, got, want []types.PendingPod) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s pending pods = %+v, want %+v", what, got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.UnschedulableSince.Equal(w.UnschedulableSince) {
			t.Errorf("%s %s unschedulable since %s, want %s", what, g.Key(), g.UnschedulableSince, w.UnschedulableSince)
		}
		g.UnschedulableSince, w.UnschedulableSince = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s pending pod %d = %+v, want %+v", what, i, g, w)
		}
	}
}

func TestIntegrationObserverMeasuresNodesFromRealObjects(t *testing.T) {
	e := newEnv(t)
	api, infer := e.poolOf("api"), e.poolOf("infer")
	size := map[string]string{kubernetes.LabelInstanceType: "s-4vcpu-8gb"}
	busy := e.node("busy", withPool(api, size))
	idle := e.node("idle", withPool(api, size))
	down := e.node("down", withPool(infer, nil))
	unpooled := e.node("unpooled", nil)

	rs := e.owner("ReplicaSet", "web")
	ds := e.owner("DaemonSet", "agent")
	e.running("app-1", busy, "1", "2Gi", ownedBy(rs))
	e.running("app-2", busy, "500m", "1Gi", ownedBy(rs))
	e.running("agent", busy, "100m", "128Mi", ownedBy(ds))
	e.running("static", busy, "200m", "256Mi", annotated(kubernetes.AnnotationMirror, "hash"), createdOn(busy))
	done := e.running("batch", busy, "2", "2Gi")
	e.running("elsewhere", unpooled, "3", "3Gi", ownedBy(rs))
	finish(e, done.Name, corev1.PodSucceeded)
	e.notReady(down)
	if err := kubernetes.NewDrainer(e.connector, kubernetes.DrainerConfig{}).Cordon(e.ctx, idle); err != nil {
		t.Fatalf("Cordon as %s: %v", kubeapi.ConnectorUser, err)
	}

	obs := e.observe()

	nodes := obs.Pools[api.WorkflowID()].Nodes
	if len(nodes) != 2 || nodes[0].Name != busy || nodes[1].Name != idle {
		t.Fatalf("api pool nodes = %+v, want %s and %s", nodes, busy, idle)
	}
	alloc := types.Resources{MilliCPU: 4000, Memory: 8 * gib, Pods: 110}
	b := nodes[0]
	// DaemonSet and mirror pods go with the node; a finished pod requests nothing.
	wantReq := types.Resources{MilliCPU: 1500, Memory: 3 * gib, Pods: 2}
	if b.Allocatable != alloc || b.Requested != wantReq || b.State != types.NodeReady || b.Size != "s-4vcpu-8gb" {
		t.Errorf("busy node = %+v, want allocatable %+v, requested %+v, ready, size s-4vcpu-8gb", b, alloc, wantReq)
	}
	if got := b.CPUUtilization(); got != 0.375 {
		t.Errorf("busy CPU utilization = %v, want 0.375", got)
	}
	if b.CreatedAt.IsZero() || time.Since(b.CreatedAt) > 5*time.Minute {
		t.Errorf("busy node CreatedAt = %s, want its creation time", b.CreatedAt)
	}
	if i := nodes[1]; i.State != types.NodeCordoned || i.Requested != (types.Resources{}) {
		t.Errorf("idle node = %+v, want cordoned with nothing requested", i)
	}
	inferNodes := obs.Pools[infer.WorkflowID()].Nodes
	if len(inferNodes) != 1 || inferNodes[0].Name != down || inferNodes[0].State != types.NodeNotReady {
		t.Errorf("infer pool nodes = %+v, want %s not ready", inferNodes, down)
	}
	for id, p := range obs.Pools {
		for _, n := range p.Nodes {
			if n.Name == unpooled {
				t.Errorf("node without %s observed in pool %s", types.LabelPool, id)
			}
		}
	}
}

func withPool(pool types.PoolKey, extra map[string]string) map[string]string {
	labels := map[string]string{types.LabelPool: pool.NodePoolLabel()}
	for k, v := range extra {
		labels[k] = v
	}
	return labels
}

// finish reports a pod's containers ended, as its kubelet would.
func finish(e *env, name string, phase corev1.PodPhase) {
	e.t.Helper()
	pod, err := e.admin.CoreV1().Pods(e.ns).Get(e.ctx, name, metaGet)
	if err != nil {
		e.t.Fatal(err)
	}
	pod.Status.Phase = phase
	if _, err := e.admin.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, pod, metaUpdate); err != nil {
		e.t.Fatal(err)
	}
}

// notReady reports the node's kubelet as not ready.
func (e *env) notReady(name string) {
	e.t.Helper()
	n := e.getNode(name)
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = corev1.ConditionFalse
			n.Status.Conditions[i].Reason = "KubeletNotReady"
		}
	}
	if _, err := e.admin.CoreV1().Nodes().UpdateStatus(e.ctx, n, metaUpdate); err != nil {
		e.t.Fatal(err)
	}
}
