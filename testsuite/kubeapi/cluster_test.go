package kubeapi

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const extraUser = "harness-extra"

func TestMain(m *testing.M) {
	os.Exit(Main(m, Options{ClusterRoleFile: "testdata/clusterrole.yaml", ExtraUsers: []string{extraUser}}))
}

func clientFor(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestConnectorUserHasExactlyTheManifestsRights(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	if len(c.ClusterRoles) != 1 || c.ClusterRoles[0] != "harness-test-reader" {
		t.Fatalf("applied roles = %v, want [harness-test-reader]", c.ClusterRoles)
	}
	connector := clientFor(t, c.ConnectorConfig)
	if _, err := connector.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("connector list nodes: %v, want allowed by the manifest", err)
	}
	if _, err := connector.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("connector list pods: %v, want allowed by the manifest", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "connector-may-not"}}
	if _, err := connector.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("connector create namespace: %v, want Forbidden", err)
	}
	node := Node("harness-rbac-node", "2", "4Gi", 10, nil)
	if _, err := connector.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("connector create node: %v, want Forbidden", err)
	}
	if _, err := CreateNode(ctx, clientFor(t, c.AdminConfig), node); err != nil {
		t.Errorf("admin create node: %v", err)
	}
}

func TestExtraUserHasNoRightsUntilGranted(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	cfg, err := c.UserConfig(extraUser)
	if err != nil {
		t.Fatal(err)
	}
	extra := clientFor(t, cfg)
	if _, err := extra.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("extra user list nodes before grant: %v, want Forbidden", err)
	}
	role := rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "harness-node-lister"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}},
	}
	if err := GrantClusterRole(ctx, c.AdminConfig, role, extraUser); err != nil {
		t.Fatal(err)
	}
	if _, err := extra.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("extra user list nodes after grant: %v", err)
	}
	if _, err := c.UserConfig("nobody"); err == nil {
		t.Error("UserConfig(nobody) succeeded, want an error")
	}
}

func TestFieldSelectorsBindingAndUnschedulableStatus(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	admin := clientFor(t, c.AdminConfig)
	const ns = "harness-selectors"
	if err := EnsureNamespace(ctx, admin, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateNode(ctx, admin, Node("harness-sel-node", "4", "8Gi", 20, map[string]string{"pool": "a"})); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bound", "pending"} {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, Pod(ns, name, "100m", "128Mi", map[string]string{"app": "sel"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bound"}}
	if err := Bind(ctx, admin, bound, "harness-sel-node"); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := MarkUnschedulable(ctx, admin, ns, "pending", since, "0/1 nodes are available"); err != nil {
		t.Fatal(err)
	}

	onNode, err := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=harness-sel-node"})
	if err != nil {
		t.Fatal(err)
	}
	if len(onNode.Items) != 1 || onNode.Items[0].Name != "bound" {
		t.Errorf("pods on node = %v, want only bound", podNames(onNode.Items))
	}
	unbound, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=", LabelSelector: "app=sel"})
	if err != nil {
		t.Fatal(err)
	}
	if len(unbound.Items) != 1 || unbound.Items[0].Name != "pending" {
		t.Fatalf("unbound pods = %v, want only pending", podNames(unbound.Items))
	}
	cond := unbound.Items[0].Status.Conditions[0]
	if cond.Type != corev1.PodScheduled || cond.Reason != corev1.PodReasonUnschedulable || !cond.LastTransitionTime.Time.Equal(since) {
		t.Errorf("condition = %+v, want PodScheduled/Unschedulable since %s", cond, since)
	}
}

// The disruption controller computes the budget from pod readiness, and
// the eviction API refuses (429) until the budget allows.
func TestEvictionHonoursTheBudgetTheDisruptionControllerComputes(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	admin := clientFor(t, c.AdminConfig)
	const ns, node = "harness-pdb", "harness-pdb-node"
	if err := EnsureNamespace(ctx, admin, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateNode(ctx, admin, Node(node, "4", "8Gi", 20, nil)); err != nil {
		t.Fatal(err)
	}
	runPod := func(name string) {
		t.Helper()
		pod := Pod(ns, name, "100m", "128Mi", map[string]string{"app": "web"})
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := Bind(ctx, admin, pod, node); err != nil {
			t.Fatal(err)
		}
		if err := MarkRunning(ctx, admin, ns, name, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	runPod("web-1")
	runPod("web-2")
	two := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &two,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if _, err := admin.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, ctx, admin, ns, "web", 2, 0)

	evict := func(name string) error {
		return admin.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	if err := evict("web-1"); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evict with no budget: %v, want 429 TooManyRequests", err)
	}

	runPod("web-3")
	waitBudget(t, ctx, admin, ns, "web", 3, 1)
	if err := evict("web-1"); err != nil {
		t.Fatalf("evict within budget: %v", err)
	}
	// Grace period 0 (see Pod): the pod is gone at once, no kubelet needed.
	if _, err := admin.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("evicted pod: get = %v, want NotFound", err)
	}
	if err := evict("web-2"); !apierrors.IsTooManyRequests(err) {
		t.Errorf("second eviction: %v, want 429: the first one used up the budget", err)
	}
}

// Without a kubelet, a bound pod deleted with a grace period is never
// removed: why Pod sets terminationGracePeriodSeconds to 0, and what
// StandInKubelet is for.
func TestBoundPodWithGracePeriodStaysTerminatingWithoutKubelet(t *testing.T) {
	c := Shared(t)
	ctx := testContext(t)
	admin := clientFor(t, c.AdminConfig)
	const ns, node = "harness-grace", "harness-grace-node"
	if err := EnsureNamespace(ctx, admin, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateNode(ctx, admin, Node(node, "4", "8Gi", 20, nil)); err != nil {
		t.Fatal(err)
	}
	pod := Pod(ns, "slow", "100m", "128Mi", nil)
	thirty := int64(30)
	pod.Spec.TerminationGracePeriodSeconds = &thirty
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Bind(ctx, admin, pod, node); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow"}}); err != nil {
		t.Fatal(err)
	}
	got, err := admin.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod with a grace period: get = %v, want it still there, terminating", err)
	}
	if got.DeletionTimestamp == nil {
		t.Fatal("evicted pod has no deletionTimestamp")
	}
	time.Sleep(time.Second)
	if _, err := admin.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{}); err != nil {
		t.Fatalf("a second later: get = %v, want the pod still terminating", err)
	}

	// The stand-in kubelet finishes the deletion.
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	stopped := StandInKubelet(kubeletCtx, admin, node, 0)
	defer func() { stopKubelet(); <-stopped }()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("stand-in kubelet did not remove the terminating pod: %v", err)
	}
}

func TestStartAndStopLeaveNothingBehind(t *testing.T) {
	requireBinaries(t, Options{})
	c, err := Start(context.Background(), Options{ClusterRoleFile: "testdata/clusterrole.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second control plane in this process ready in %s", c.StartedIn.Round(time.Millisecond))
	dir := c.Dir()
	pids := c.PIDs()
	if len(pids) != 3 {
		t.Fatalf("running %d processes, want etcd, kube-apiserver, kube-controller-manager", len(pids))
	}
	c.Stop()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %s after Stop: %v, want removed", dir, err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d after Stop: kill(0) = %v, want ESRCH", pid, err)
		}
	}
	c.Stop() // a second Stop is harmless
}

func TestStartFailsClearlyOnABadManifest(t *testing.T) {
	requireBinaries(t, Options{})
	_, err := Start(context.Background(), Options{ClusterRoleFile: "testdata/missing.yaml"})
	if err == nil {
		t.Fatal("Start with a missing manifest succeeded")
	}
	if want := "testdata/missing.yaml"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}

func waitBudget(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, name string, healthy, allowed int32) {
	t.Helper()
	var last policyv1.PodDisruptionBudgetStatus
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pdb, err := client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = pdb.Status
		return pdb.Status.ObservedGeneration == pdb.Generation &&
			pdb.Status.CurrentHealthy == healthy && pdb.Status.DisruptionsAllowed == allowed, nil
	})
	if err != nil {
		t.Fatalf("PDB %s/%s: want %d healthy and %d allowed, last status %+v: %v", ns, name, healthy, allowed, last, err)
	}
}

func podNames(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}
