package kwok

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors/kwok"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

const (
	clusterID = "kwok-e2e"
	// region is the clusters' declared region, which kwok's nodes carry.
	region  = "kwok-region-1"
	org     = "acme"
	project = "kwok"
	// bootDelay is how long a bought machine takes to become a node.
	bootDelay = 2 * time.Second
	// bindWithin is the bound: every bought node has a pod bound
	// by kube-scheduler within the boot delay and this much.
	bindWithin = 30 * time.Second
)

// env is the control plane and the embedded system every case shares.
type env struct {
	cluster *kubeapi.Cluster
	admin   k8s.Interface
	stack   *devstack.Stack
}

// startEnv runs the embedded system with the kwok cluster on the shared
// control plane; it stops when the calling test ends.
func startEnv(t *testing.T) *env {
	t.Helper()
	c := kubeapi.Shared(t)
	admin := k8s.NewForConfigOrDie(c.AdminConfig)
	cluster, release, err := devfleet.KwokCluster(clusterID, c.AdminConfig, c.ConnectorConfig,
		kwok.Config{BootDelay: types.Duration(bootDelay), Resync: types.Duration(250 * time.Millisecond), Region: region}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := starter.SpecFile{Clusters: []contract.ClusterDeclared{{
		ID: clusterID, Provider: kwok.ProviderName, Phase: contract.PhaseActive, Region: region, SampleInterval: types.Duration(time.Second),
	}}}
	// Cleanups run last first: the worker stops before the cluster's
	// reconciler and informers it uses.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = release(ctx)
	})
	stack := testsuite.StartStackOn(t, spec, "", workers.StaticClusters{clusterID: cluster})
	return &env{cluster: c, admin: admin, stack: stack}
}

// poolKey is a case's pool: one service per case.
func poolKey(service string) types.PoolKey {
	return types.PoolKey{Org: org, Project: project, Service: service, Provider: kwok.ProviderName, Cluster: clusterID}
}

// policy is fast thresholds with no floor, so every node is one the
// planner bought.
func policy() types.Policy {
	p := testsuite.FastPolicy()
	p.MinNodes, p.MaxNodes = 0, 12
	return p
}

func (e *env) applyPool(t *testing.T, key types.PoolKey, p types.Policy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := starter.ApplyPool(ctx, e.stack.Client, contract.PoolSpec{Key: key, Policy: p}, ""); err != nil {
		t.Fatalf("apply pool %s: %v", key.WorkflowID(), err)
	}
}

func (e *env) status(t *testing.T, key types.PoolKey) contract.PoolStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := starter.PoolStatus(ctx, e.stack.Client, key)
	if err != nil {
		t.Fatalf("status of %s: %v", key.WorkflowID(), err)
	}
	return st
}

// workload is one ReplicaSet of a case, its pods attributed to the pool.
type workload struct {
	name     string
	replicas int32
	cpu, mem string
	gpus     int64
	disk     string // ephemeral-storage request
	// spec changes the pod spec (selectors, affinity, tolerations, spread).
	spec func(*corev1.PodSpec)
	// labels are added to the pods' own (app=<name> and the pool's).
	labels map[string]string
}

func (w workload) podLabels(service string) map[string]string {
	l := map[string]string{"app": w.name, types.LabelOrg: org, types.LabelProject: project, types.LabelService: service}
	for k, v := range w.labels {
		l[k] = v
	}
	return l
}

func requests(cpu, mem string, gpus int64, disk string) corev1.ResourceList {
	r := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	if gpus > 0 {
		r[types.ResourceGPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	if disk != "" {
		r[corev1.ResourceEphemeralStorage] = resource.MustParse(disk)
	}
	return r
}

func (w workload) replicaSet(ns, service string) *appsv1.ReplicaSet {
	labels := w.podLabels(service)
	spec := corev1.PodSpec{
		// With kwok there is no kubelet to wait for: a deleted pod goes at once.
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app",
			Resources: corev1.ResourceRequirements{Requests: requests(w.cpu, w.mem, w.gpus, w.disk), Limits: gpuLimit(w.gpus)}}},
	}
	if w.spec != nil {
		w.spec(&spec)
	}
	// Several pools share the cluster: a pod keeps to its own pool's
	// nodes, as a tenant's would. The pool's templates carry the label.
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[types.LabelPool] = poolKey(service).NodePoolLabel()
	replicas := w.replicas
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// gpuLimit: an extended resource's request must equal its limit.
func gpuLimit(gpus int64) corev1.ResourceList {
	if gpus == 0 {
		return nil
	}
	return corev1.ResourceList{types.ResourceGPU: *resource.NewQuantity(gpus, resource.DecimalSI)}
}

func (w workload) pdb(ns string) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.name}}},
	}
}

func ctxFor(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func (e *env) createNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	if _, err := e.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) createWorkload(t *testing.T, ns, service string, w workload) {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	if _, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, w.pdb(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.AppsV1().ReplicaSets(ns).Create(ctx, w.replicaSet(ns, service), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) scale(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.admin.AppsV1().ReplicaSets(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) pods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	list, err := e.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// poolNodes are the nodes carrying the pool's label, by name.
func (e *env) poolNodes(t *testing.T, key types.PoolKey) map[string]corev1.Node {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	list, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: types.LabelPool + "=" + key.NodePoolLabel()})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		out[n.Name] = n
	}
	return out
}

// evictions counts the pods of ns the eviction API took (the API server
// marks each with DisruptionTarget, reason EvictionByEvictionAPI, before
// deleting it), from the moment it is called until stop.
func (e *env) evictions(t *testing.T, ns string) (count func() int, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := e.admin.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	go func() {
		// The API server ends a watch when it likes (its request timeout,
		// a compaction): watch again from the last event seen, or a burst's
		// evictions after that moment would go uncounted.
		version := ""
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					version = "" // too old to resume from: watch from now
				}
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				version = p.ResourceVersion
				if ev.Type != watch.Modified && ev.Type != watch.Deleted {
					continue
				}
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" {
						mu.Lock()
						seen[p.Name] = true
						mu.Unlock()
					}
				}
			}
			if ctx.Err() != nil {
				return
			}
			var err error
			if w, err = e.admin.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: version}); err != nil {
				if w, err = e.admin.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{}); err != nil {
					return
				}
			}
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}, cancel
}

// boundBy is when kube-scheduler bound the pod (its PodScheduled=True
// condition), false while it is not bound.
func boundAt(p *corev1.Pod) (time.Time, bool) {
	if p.Spec.NodeName == "" {
		return time.Time{}, false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

func isDaemonPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// waitFor polls cond every half second until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if ok, last := poll(timeout, 500*time.Millisecond, cond); !ok {
		t.Fatalf("%s not reached in %s; last: %s", what, timeout, last)
	}
}

// poll calls cond every interval until it holds or timeout passes, and
// says whether it held, with cond's last state.
func poll(timeout, every time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ok, state := cond(); ok {
			return true, state
		}
		time.Sleep(every)
	}
	return cond()
}
