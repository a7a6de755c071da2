package kubernetes_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

// roleVerb is one verb of one rule of one ClusterRole in the manifest.
type roleVerb struct {
	role, rule int
	verb       string
}

func (v roleVerb) describe(roles []rbacv1.ClusterRole) string {
	r := roles[v.role].Rules[v.rule]
	return fmt.Sprintf("%s %v in groups %q (ClusterRole %s)", v.verb, r.Resources, r.APIGroups, roles[v.role].Name)
}

func roleVerbs(roles []rbacv1.ClusterRole) []roleVerb {
	var out []roleVerb
	for i, role := range roles {
		for j, rule := range role.Rules {
			for _, verb := range rule.Verbs {
				out = append(out, roleVerb{role: i, rule: j, verb: verb})
			}
		}
	}
	return out
}

// withoutVerb is the manifest's ClusterRoles with one verb taken out, under
// new names so they do not replace the shipped ones.
func withoutVerb(roles []rbacv1.ClusterRole, drop roleVerb, suffix string) []rbacv1.ClusterRole {
	var out []rbacv1.ClusterRole
	for i, role := range roles {
		role = *role.DeepCopy()
		role.Name += "-" + suffix
		if i == drop.role {
			rule := &role.Rules[drop.rule]
			rule.Verbs = slices.DeleteFunc(rule.Verbs, func(v string) bool { return v == drop.verb })
			if len(rule.Verbs) == 0 {
				role.Rules = slices.Delete(role.Rules, drop.rule, drop.rule+1)
			}
		}
		out = append(out, role)
	}
	return out
}

func readsSecrets(roles []rbacv1.ClusterRole) bool {
	for _, role := range roles {
		for _, rule := range role.Rules {
			if slices.Contains(rule.Resources, "secrets") {
				return true
			}
		}
	}
	return false
}

// connectorCycle is everything the connector does to a cluster: observe
// (by lists, then from the informer cache),
// read a credential (when the role grants secrets), drain a node with one
// pod, uncordon it. It returns the first step that failed.
func connectorCycle(e *env, cfg *rest.Config, withSecrets bool, node string, buffers []string) (string, error) {
	client := mustClient(e.t, cfg)
	obs := kubernetes.NewObserver(client, kubernetes.Config{Cluster: "it", Provider: "do"})
	if _, err := obs.ObserveCluster(e.ctx); err != nil {
		return "ObserveCluster", err
	}
	if step, err := observeFromCache(e, client); err != nil {
		return step, err
	}
	if withSecrets {
		if _, err := kubernetes.NewSecretReader(client).ReadSecret(e.ctx, e.ns, "cloud", "token"); err != nil {
			return "ReadSecret", err
		}
	}
	d := kubernetes.NewDrainer(client, kubernetes.DrainerConfig{})
	if _, err := d.Drain(e.ctx, node, drainOptions(time.Minute)); err != nil {
		return "Drain", err
	}
	if err := d.Uncordon(e.ctx, node); err != nil {
		return "Uncordon", err
	}
	if err := recordTwice(e, client, node); err != nil {
		return "RecordEvents", err
	}
	if err := observeBuffers(e, cfg, client, buffers); err != nil {
		return "ObserveCluster's CapacityBuffers", err
	}
	return "", nil
}

// recordTwice records one event on node twice, so the recorder creates it
// and then patches its count, and waits until the API server holds it with
// count 2 or the recorder's write failed.
func recordTwice(e *env, client k8s.Interface, node string) error {
	r := kubernetes.NewEventRecorder(client)
	defer r.Close()
	ev := connectors.ClusterEvent{Kind: connectors.EventKindNode, Name: node, Type: connectors.EventWarning,
		Reason: connectors.EventDisruptionBlocked, Message: "visor: the RBAC cycle"}
	for range 2 {
		if err := r.RecordEvents(e.ctx, []connectors.ClusterEvent{ev}); err != nil {
			return err
		}
	}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := r.LastWriteError(); err != nil {
			return err
		}
		if got := e.eventsOn("default", node); len(got) == 1 && got[0].Count == 2 {
			return nil
		}
	}
	return fmt.Errorf("the event on node %s was not written with count 2 within 15s: %+v", node, e.eventsOn("default", node))
}

// observeFromCache samples through the informer cache for a few seconds:
// a watch refused after the first list shows at a later sample.
func observeFromCache(e *env, client k8s.Interface) (string, error) {
	obs := kubernetes.NewObserver(client, kubernetes.Config{Cluster: "it", Provider: "do", Informers: true})
	defer obs.Close(e.ctx)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := obs.ObserveCluster(e.ctx); err != nil {
			return "ObserveCluster from the informer cache", err
		}
	}
	return "", nil
}

// cycleFixture is a node with one evictable pod, and the credential secret.
func (e *env) cycleFixture(suffix string, rs metav1.OwnerReference) string {
	e.t.Helper()
	node := e.node(suffix, nil)
	e.running("pod-"+suffix, node, "100m", "128Mi", ownedBy(rs))
	return node
}

func (e *env) secret() {
	e.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cloud"}, Data: map[string][]byte{"token": []byte("t0ken")}}
	if _, err := e.admin.CoreV1().Secrets(e.ns).Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// The ClusterRole shipped in deploy/rbac is exactly enough: the connector's
// whole cycle works with it, and fails with Forbidden without any one of
// its verbs.
func TestIntegrationShippedClusterRoleIsExactlyEnough(t *testing.T) {
	e := newEnv(t)
	roles, err := kubeapi.ReadClusterRoles(shippedRole)
	if err != nil {
		t.Fatal(err)
	}
	withSecrets := readsSecrets(roles)
	e.secret()
	rs := e.owner("ReplicaSet", "web")

	if step, err := connectorCycle(e, e.audit.wrap(e.cluster.ConnectorConfig), withSecrets, e.cycleFixture("full", rs), e.bufferFixture("full")); err != nil {
		t.Fatalf("with the shipped ClusterRole, %s failed: %v", step, err)
	}

	for i, drop := range roleVerbs(roles) {
		what := drop.describe(roles)
		rule := roles[drop.role].Rules[drop.rule]
		if slices.Contains(rule.APIGroups, "metrics.k8s.io") {
			// No metrics-server here, and usage is optional by design.
			t.Logf("not provable here: %s (metrics-server is not running)", what)
			continue
		}
		user := fmt.Sprintf("visor-minus-%d", i)
		for _, role := range withoutVerb(roles, drop, fmt.Sprintf("minus-%d", i)) {
			if err := kubeapi.GrantClusterRole(e.ctx, e.cluster.AdminConfig, role, user); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := e.cluster.UserConfig(user)
		if err != nil {
			t.Fatal(err)
		}
		step, err := connectorCycle(e, cfg, withSecrets, e.cycleFixture(fmt.Sprintf("m%d", i), rs), e.bufferFixture(fmt.Sprintf("m%d", i)))
		switch {
		case err == nil:
			t.Errorf("without %s the connector still works: the ClusterRole grants more than it needs", what)
		case !apierrors.IsForbidden(err):
			t.Errorf("without %s, %s failed with %v, want Forbidden", what, step, err)
		case errclass.Of(err) != errclass.Permanent:
			t.Errorf("without %s, %s failed with class %s, want Permanent: retrying cannot grant a verb", what, step, errclass.Of(err))
		default:
			t.Logf("without %s: %s fails (Forbidden, Permanent)", what, step)
		}
		if rule.Resources[0] == "pods/eviction" && step != "Drain" {
			t.Errorf("without the eviction verb, %s failed, want Drain", step)
		}
	}
}

func TestIntegrationDrainWithoutTheEvictionVerbFailsPermanently(t *testing.T) {
	e := newEnv(t)
	roles, err := kubeapi.ReadClusterRoles(shippedRole)
	if err != nil {
		t.Fatal(err)
	}
	var evictVerb *roleVerb
	for _, v := range roleVerbs(roles) {
		if slices.Contains(roles[v.role].Rules[v.rule].Resources, "pods/eviction") && v.verb == "create" {
			evictVerb = &v
			break
		}
	}
	if evictVerb == nil {
		t.Fatalf("%s grants no create on pods/eviction: the connector could never drain", shippedRole)
	}
	const user = "visor-minus-eviction"
	for _, role := range withoutVerb(roles, *evictVerb, "minus-eviction") {
		if err := kubeapi.GrantClusterRole(e.ctx, e.cluster.AdminConfig, role, user); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := e.cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	node := e.cycleFixture("n", e.owner("ReplicaSet", "web"))

	_, err = kubernetes.NewDrainer(mustClient(t, cfg), kubernetes.DrainerConfig{}).Drain(e.ctx, node, drainOptions(time.Minute))

	var typed *errclass.Error
	if !errors.As(err, &typed) || typed.Class != errclass.Permanent || !apierrors.IsForbidden(err) {
		t.Fatalf("Drain without the eviction verb: %v, want a Permanent error wrapping Forbidden", err)
	}
	if !strings.Contains(err.Error(), "evict") {
		t.Errorf("error %q does not say the eviction was refused", err)
	}
	if got := e.podNamesOn(node); len(got) != 1 {
		t.Errorf("pods on the node = %v, want the one that could not be evicted", got)
	}
	// A permanent failure is not retried: the drain must not leave the
	// node cordoned for good.
	n, err := mustClient(t, e.cluster.AdminConfig).CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Spec.Unschedulable {
		t.Errorf("node %s left cordoned after a permanent eviction failure", node)
	}
}
