package kubernetes_test

// Integration tests of the connector against a real control plane (etcd,
// kube-apiserver, and kube-controller-manager running the disruption
// controller) from testsuite/kubeapi. They run in the normal `go test`:
// skipped with a message naming the build script when the binaries are not
// cached, failed when CI=true and they are missing.
//
// The connector always talks as kubeapi.ConnectorUser, bound to the
// ClusterRole shipped in deploy/rbac and nothing else; fixtures are written
// as an admin. PodDisruptionBudget status comes from the real disruption
// controller: tests make it change by making pods Ready, never by writing
// PDB status.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

// shippedRole is the manifest the connector's rights come from.
var shippedRole = filepath.Join("..", "..", "deploy", "rbac", "clusterrole.yaml")

func TestMain(m *testing.M) {
	os.Exit(kubeapi.Main(m, kubeapi.Options{ClusterRoleFile: shippedRole, ExtraUsers: minusUsers()}))
}

// minusUsers are one spare user per (rule, verb) of the shipped role, and
// one for the eviction test: the RBAC tests bind each to the role minus
// one verb. When the manifest cannot be read, kubeapi.Start reports why.
func minusUsers() []string {
	users := []string{"visor-minus-eviction"}
	roles, err := kubeapi.ReadClusterRoles(shippedRole)
	if err != nil {
		return users
	}
	for i := range roleVerbs(roles) {
		users = append(users, fmt.Sprintf("visor-minus-%d", i))
	}
	return users
}

var testSeq atomic.Int32

var (
	metaGet    = metav1.GetOptions{}
	metaUpdate = metav1.UpdateOptions{}
)

// env is one test's slice of the shared cluster: its own namespace, and
// node names prefixed with it.
type env struct {
	t         *testing.T
	ctx       context.Context
	cluster   *kubeapi.Cluster
	admin     k8s.Interface
	connector k8s.Interface // as kubeapi.ConnectorUser
	audit     *apiAudit     // the connector's requests
	ns        string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := kubeapi.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ns := fmt.Sprintf("it%d-%s", testSeq.Add(1), dnsPart(t.Name(), 40))
	e := &env{t: t, ctx: ctx, cluster: c, ns: ns, audit: &apiAudit{}}
	e.admin = mustClient(t, c.AdminConfig)
	e.connector = mustClient(t, e.audit.wrap(c.ConnectorConfig))
	if err := kubeapi.EnsureNamespace(ctx, e.admin, ns); err != nil {
		t.Fatal(err)
	}
	return e
}

func mustClient(t *testing.T, cfg *rest.Config) k8s.Interface {
	t.Helper()
	c, err := k8s.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var notDNS = regexp.MustCompile(`[^a-z0-9]+`)

// dnsPart turns a test name into a DNS label fragment.
func dnsPart(s string, max int) string {
	s = strings.Trim(notDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > max {
		s = strings.TrimRight(s[:max], "-")
	}
	return s
}

// node creates a Ready node named <ns>-<suffix> and returns its name.
func (e *env) node(suffix string, labels map[string]string) string {
	e.t.Helper()
	name := e.ns + "-" + suffix
	if _, err := kubeapi.CreateNode(e.ctx, e.admin, kubeapi.Node(name, "4", "8Gi", 110, labels)); err != nil {
		e.t.Fatal(err)
	}
	return name
}

// owner creates a workload object (ReplicaSet or DaemonSet) so pods can
// name a real controller, as they do in a cluster.
func (e *env) owner(kind, name string) metav1.OwnerReference {
	e.t.Helper()
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"owner": name}}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"owner": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "visor.invalid/app:test"}}},
	}
	var uid string
	switch kind {
	case "ReplicaSet":
		zero := int32(0)
		rs, err := e.admin.AppsV1().ReplicaSets(e.ns).Create(e.ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       appsv1.ReplicaSetSpec{Replicas: &zero, Selector: selector, Template: template},
		}, metav1.CreateOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		uid = string(rs.UID)
	case "DaemonSet":
		ds, err := e.admin.AppsV1().DaemonSets(e.ns).Create(e.ctx, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       appsv1.DaemonSetSpec{Selector: selector, Template: template},
		}, metav1.CreateOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		uid = string(ds.UID)
	default:
		e.t.Fatalf("owner kind %s", kind)
	}
	controller := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: apitypes.UID(uid), Controller: &controller}
}

// podOption changes a pod before it is created.
type podOption func(*corev1.Pod)

func ownedBy(ref metav1.OwnerReference) podOption {
	return func(p *corev1.Pod) { p.OwnerReferences = append(p.OwnerReferences, ref) }
}

func labelled(kv ...string) podOption {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func annotated(k, v string) podOption {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

// gracePeriod gives the pod a termination grace period, so that after
// eviction it stays Terminating until a (stand-in) kubelet removes it.
func gracePeriod(seconds int64) podOption {
	return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &seconds }
}

// pod creates a pod requesting cpu and memory; it stays unbound.
func (e *env) pod(name, cpu, memory string, opts ...podOption) *corev1.Pod {
	e.t.Helper()
	p := kubeapi.Pod(e.ns, name, cpu, memory, nil)
	for _, o := range opts {
		o(p)
	}
	created, err := e.admin.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create pod %s: %v", name, err)
	}
	return created
}

// createdOn sets spec.nodeName at creation, as a kubelet does for the
// mirror pods of its static pods (the API requires it of them).
func createdOn(node string) podOption {
	return func(p *corev1.Pod) { p.Spec.NodeName = node }
}

// running creates a pod, binds it to node (unless created there) and
// reports it Running and Ready.
func (e *env) running(name, node, cpu, memory string, opts ...podOption) *corev1.Pod {
	e.t.Helper()
	p := e.pod(name, cpu, memory, opts...)
	if p.Spec.NodeName == "" {
		if err := kubeapi.Bind(e.ctx, e.admin, p, node); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := kubeapi.MarkRunning(e.ctx, e.admin, e.ns, name, time.Now()); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) getNode(name string) *corev1.Node {
	e.t.Helper()
	n, err := e.admin.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// podNamesOn lists the names of the pods bound to node in the test's namespace.
func (e *env) podNamesOn(node string) []string {
	e.t.Helper()
	pods, err := e.admin.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

func (e *env) key(name string) string { return e.ns + "/" + name }

// eventually polls cond every 50 ms for up to a minute.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// apiAudit records the connector's eviction requests and their answers,
// the way an API server audit log would, to count work done twice.
type apiAudit struct {
	mu        sync.Mutex
	evictions []evictionCall
}

type evictionCall struct {
	pod    string // namespace/name
	status int
}

var evictionPath = regexp.MustCompile(`/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction$`)

func (a *apiAudit) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if m := evictionPath.FindStringSubmatch(req.URL.Path); m != nil && req.Method == http.MethodPost {
				status := 0
				if resp != nil {
					status = resp.StatusCode
				}
				a.mu.Lock()
				a.evictions = append(a.evictions, evictionCall{pod: m[1] + "/" + m[2], status: status})
				a.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// count is how many eviction calls for pod ("" for any) got status (0 for any).
func (a *apiAudit) count(pod string, status int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.evictions {
		if (pod == "" || c.pod == pod) && (status == 0 || c.status == status) {
			n++
		}
	}
	return n
}

// succeeded maps each pod to its number of successful (2xx) evictions.
func (a *apiAudit) succeeded() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[string]int{}
	for _, c := range a.evictions {
		if c.status >= 200 && c.status < 300 {
			m[c.pod]++
		}
	}
	return m
}
