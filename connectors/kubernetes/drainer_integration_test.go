package kubernetes_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

func (e *env) drainer() *kubernetes.Drainer {
	return kubernetes.NewDrainer(e.connector, kubernetes.DrainerConfig{})
}

func drainOptions(deadline time.Duration) connectors.DrainOptions {
	return connectors.DrainOptions{Deadline: time.Now().Add(deadline), EvictionRetry: 200 * time.Millisecond}
}

// budget creates a PDB keeping minAvailable pods labelled app=name, and
// waits until the disruption controller has computed its status.
func (e *env) budget(name string, minAvailable int32, wantAllowed int32) {
	e.t.Helper()
	min := intstr.FromInt32(minAvailable)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &min,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}
	if _, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.eventually(fmt.Sprintf("PDB %s to allow %d disruptions", name, wantAllowed), func() bool {
		got, err := e.admin.PolicyV1().PodDisruptionBudgets(e.ns).Get(e.ctx, name, metaGet)
		return err == nil && got.Status.ObservedGeneration == got.Generation && got.Status.DisruptionsAllowed == wantAllowed
	})
}

func TestIntegrationCordonIsIdempotentAndUncordonUndoesIt(t *testing.T) {
	e := newEnv(t)
	node := e.node("n", nil)
	d := e.drainer()

	if err := d.Cordon(e.ctx, node); err != nil {
		t.Fatalf("Cordon as %s: %v", kubeapi.ConnectorUser, err)
	}
	first := e.getNode(node)
	if !first.Spec.Unschedulable || first.Annotations[kubernetes.AnnotationCordonedAt] == "" {
		t.Fatalf("after Cordon: unschedulable=%v annotations=%v, want cordoned and marked", first.Spec.Unschedulable, first.Annotations)
	}
	if err := d.Cordon(e.ctx, node); err != nil {
		t.Fatal(err)
	}
	if again := e.getNode(node); again.ResourceVersion != first.ResourceVersion {
		t.Errorf("a second Cordon wrote the node (resourceVersion %s -> %s)", first.ResourceVersion, again.ResourceVersion)
	}
	if err := d.Uncordon(e.ctx, node); err != nil {
		t.Fatalf("Uncordon: %v", err)
	}
	if n := e.getNode(node); n.Spec.Unschedulable || n.Annotations[kubernetes.AnnotationCordonedAt] != "" {
		t.Errorf("after Uncordon: unschedulable=%v annotations=%v, want schedulable and unmarked", n.Spec.Unschedulable, n.Annotations)
	}

	// An operator's cordon stays the operator's.
	n := e.getNode(node)
	n.Spec.Unschedulable = true
	if _, err := e.admin.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Cordon(e.ctx, node); err != nil {
		t.Fatal(err)
	}
	if n := e.getNode(node); n.Annotations[kubernetes.AnnotationCordonedAt] != "" {
		t.Errorf("Cordon claimed an operator's cordon: annotations %v", n.Annotations)
	}

	err := d.Cordon(e.ctx, e.ns+"-no-such-node")
	if !errclass.IsNotFound(err) {
		t.Errorf("Cordon of a missing node: %v, want class NotFound", err)
	}
}

// The eviction API answers 429 while the PodDisruptionBudget allows no
// disruption; the drain keeps retrying, and finishes once replacements
// elsewhere are Ready and the disruption controller raises the budget.
func TestIntegrationDrainRetriesEvictionsThePDBRefusesUntilTheBudgetAllows(t *testing.T) {
	e := newEnv(t)
	drained, other := e.node("drained", nil), e.node("other", nil)
	rs := e.owner("ReplicaSet", "web")
	e.running("web-1", drained, "100m", "128Mi", ownedBy(rs), labelled("app", "web"))
	e.running("web-2", drained, "100m", "128Mi", ownedBy(rs), labelled("app", "web"))
	e.budget("web", 2, 0)

	result := make(chan drainOutcome, 1)
	go func() {
		res, err := e.drainer().Drain(e.ctx, drained, drainOptions(2*time.Minute))
		result <- drainOutcome{res, err}
	}()

	e.eventually("both evictions refused with 429", func() bool {
		return e.audit.count(e.key("web-1"), http.StatusTooManyRequests) > 0 &&
			e.audit.count(e.key("web-2"), http.StatusTooManyRequests) > 0
	})
	if got := e.podNamesOn(drained); len(got) != 2 {
		t.Fatalf("pods on the node while the budget allows nothing = %v, want both", got)
	}
	if !e.getNode(drained).Spec.Unschedulable {
		t.Error("node not cordoned while its drain waits on the budget")
	}

	// The ReplicaSet's part: keep three replicas Ready, new ones on the
	// other node.
	replicas, stopReplicas := context.WithCancel(e.ctx)
	replicasDone := keepReplicas(e, replicas, other, 3, ownedBy(rs), labelled("app", "web"))

	var out drainOutcome
	select {
	case out = <-result:
	case <-time.After(time.Minute):
		t.Fatal("drain did not finish a minute after the budget allowed it")
	}
	stopReplicas()
	<-replicasDone
	if out.err != nil {
		t.Fatalf("Drain: %v", out.err)
	}
	if want := []string{e.key("web-1"), e.key("web-2")}; !reflect.DeepEqual(out.res.Evicted, want) {
		t.Errorf("evicted %v, want %v", out.res.Evicted, want)
	}
	if got := e.podNamesOn(drained); len(got) != 0 {
		t.Errorf("pods left on the drained node: %v", got)
	}
	if got := e.audit.succeeded(); got[e.key("web-1")] != 1 || got[e.key("web-2")] != 1 {
		t.Errorf("successful evictions per pod = %v, want one each", got)
	}
	t.Logf("evictions refused with 429: %d", e.audit.count("", http.StatusTooManyRequests))
}

type drainOutcome struct {
	res connectors.DrainResult
	err error
}

// keepReplicas stands in for a ReplicaSet controller, scheduler and
// kubelet: it keeps want Ready, non-terminating pods with the given labels,
// starting new ones on node.
func keepReplicas(e *env, ctx context.Context, node string, want int, opts ...podOption) <-chan struct{} {
	probe := e.newPodShape(opts...)
	selector := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: probe.Labels})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 1; ctx.Err() == nil; {
			alive := want // on a list error, wait for the next round
			if pods, err := e.admin.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: selector}); err == nil {
				alive = 0
				for _, p := range pods.Items {
					if p.DeletionTimestamp == nil {
						alive++
					}
				}
			}
			for ; alive < want; alive++ {
				name := fmt.Sprintf("replica-%d", n)
				n++
				p := e.newPodShape(opts...)
				p.Name = name
				if _, err := e.admin.CoreV1().Pods(e.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					break
				}
				if kubeapi.Bind(ctx, e.admin, p, node) != nil || kubeapi.MarkRunning(ctx, e.admin, e.ns, name, time.Now()) != nil {
					break
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return done
}

func (e *env) newPodShape(opts ...podOption) *corev1.Pod {
	p := kubeapi.Pod(e.ns, "", "100m", "128Mi", nil)
	for _, o := range opts {
		o(p)
	}
	return p
}

func TestIntegrationDrainRefusesWhenAPodIsMarkedSafeToEvictFalse(t *testing.T) {
	e := newEnv(t)
	node := e.node("n", nil)
	rs := e.owner("ReplicaSet", "web")
	e.running("app", node, "100m", "128Mi", ownedBy(rs))
	e.running("precious", node, "100m", "128Mi", ownedBy(rs), annotated(kubernetes.AnnotationSafeToEvict, "false"))

	_, err := e.drainer().Drain(e.ctx, node, drainOptions(time.Minute))

	if !errclass.IsPermanent(err) || !errors.Is(err, kubernetes.ErrDrainRefused) {
		t.Fatalf("Drain: %v, want a Permanent ErrDrainRefused", err)
	}
	if !strings.Contains(err.Error(), e.key("precious")) {
		t.Errorf("error %q does not name the blocking pod", err)
	}
	if n := e.audit.count("", 0); n != 0 {
		t.Errorf("a refused drain sent %d evictions, want none", n)
	}
	if got := e.podNamesOn(node); len(got) != 2 {
		t.Errorf("pods on the node after a refused drain = %v, want both", got)
	}
	if e.getNode(node).Spec.Unschedulable {
		t.Error("a refused drain left the node cordoned")
	}
}

func TestIntegrationDrainSkipsDaemonSetAndMirrorPods(t *testing.T) {
	e := newEnv(t)
	node := e.node("n", nil)
	rs, ds := e.owner("ReplicaSet", "web"), e.owner("DaemonSet", "agent")
	e.running("app", node, "100m", "128Mi", ownedBy(rs))
	e.running("agent", node, "100m", "128Mi", ownedBy(ds))
	e.running("static", node, "100m", "128Mi", annotated(kubernetes.AnnotationMirror, "hash"), createdOn(node))

	res, err := e.drainer().Drain(e.ctx, node, drainOptions(time.Minute))
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if want := []string{e.key("app")}; !reflect.DeepEqual(res.Evicted, want) {
		t.Errorf("evicted %v, want %v", res.Evicted, want)
	}
	if want := []string{e.key("agent"), e.key("static")}; !reflect.DeepEqual(res.Skipped, want) {
		t.Errorf("skipped %v, want %v", res.Skipped, want)
	}
	if got := e.podNamesOn(node); !reflect.DeepEqual(got, []string{"agent", "static"}) {
		t.Errorf("pods left on the node = %v, want agent and static", got)
	}
	if n := e.audit.count(e.key("agent"), 0) + e.audit.count(e.key("static"), 0); n != 0 {
		t.Errorf("%d evictions of DaemonSet or mirror pods, want none", n)
	}
}

// A drain cancelled after its first eviction, then run again, evicts every
// pod exactly once: the resumed drain waits for the pod already
// terminating instead of evicting it again.
func TestIntegrationInterruptedDrainResumesWithoutEvictingTwice(t *testing.T) {
	e := newEnv(t)
	node := e.node("n", nil)
	rs := e.owner("ReplicaSet", "web")
	all := []string{"a", "b", "c", "d"}
	for _, name := range all {
		e.running(name, node, "100m", "128Mi", ownedBy(rs), gracePeriod(30))
	}

	first, interrupt := context.WithCancel(e.ctx)
	var once sync.Once
	opts := drainOptions(2 * time.Minute)
	opts.Progress = func(p connectors.DrainProgress) {
		if len(p.Evicted) > 0 {
			once.Do(interrupt)
		}
	}
	res1, err := e.drainer().Drain(first, node, opts)
	if err == nil || errclass.Of(err) != errclass.Retryable {
		t.Fatalf("interrupted Drain: %v, want a Retryable error", err)
	}
	if len(res1.Evicted) == 0 || len(res1.Evicted) == len(all) {
		t.Fatalf("interrupted drain evicted %v, want some but not all", res1.Evicted)
	}
	if !e.getNode(node).Spec.Unschedulable {
		t.Fatal("an interrupted drain uncordoned the node; the resumed drain could race new pods")
	}
	// No kubelet has stopped the evicted pods yet: they are terminating
	// when the drain resumes.
	for _, key := range res1.Evicted {
		name := strings.TrimPrefix(key, e.ns+"/")
		if p, err := e.admin.CoreV1().Pods(e.ns).Get(e.ctx, name, metaGet); err != nil || p.DeletionTimestamp == nil {
			t.Fatalf("pod %s after its eviction: %v, want it terminating", key, err)
		}
	}

	// The (stand-in) kubelet starts stopping pods once the resumed drain
	// has made its first round of evictions, and so has already decided
	// about the pods the first drain evicted.
	// (Progress runs on the drain's own goroutine, this test's.)
	kubelet, stopKubelet := context.WithCancel(e.ctx)
	var kubeletDone <-chan struct{}
	defer func() {
		stopKubelet()
		if kubeletDone != nil {
			<-kubeletDone
		}
	}()
	opts = drainOptions(2 * time.Minute)
	opts.Progress = func(p connectors.DrainProgress) {
		if len(p.Evicted) > 0 && kubeletDone == nil {
			kubeletDone = kubeapi.StandInKubelet(kubelet, e.admin, node, 0)
		}
	}
	res2, err := e.drainer().Drain(e.ctx, node, opts)
	if err != nil {
		t.Fatalf("resumed Drain: %v", err)
	}

	if got := e.podNamesOn(node); len(got) != 0 {
		t.Errorf("pods left after the resumed drain: %v", got)
	}
	for _, name := range all {
		if n := e.audit.succeeded()[e.key(name)]; n != 1 {
			t.Errorf("pod %s evicted %d times across both drains, want exactly once", name, n)
		}
	}
	both := append(slices.Clone(res1.Evicted), res2.Evicted...)
	slices.Sort(both)
	want := []string{e.key("a"), e.key("b"), e.key("c"), e.key("d")}
	if !reflect.DeepEqual(both, want) {
		t.Errorf("first drain evicted %v, resumed drain %v; together want each of %v once", res1.Evicted, res2.Evicted, want)
	}
}

func TestIntegrationDrainPastItsDeadlineUncordonsTheNode(t *testing.T) {
	e := newEnv(t)
	node := e.node("n", nil)
	rs := e.owner("ReplicaSet", "web")
	e.running("web-1", node, "100m", "128Mi", ownedBy(rs), labelled("app", "web"))
	e.budget("web", 1, 0)

	// The drain's clock reaches the deadline once the budget has refused
	// an eviction, so it is the budget that keeps the pod, however slow
	// the machine.
	deadline := time.Now().Add(time.Hour)
	clock := func() time.Time {
		if e.audit.count(e.key("web-1"), http.StatusTooManyRequests) > 0 {
			return deadline.Add(time.Second)
		}
		return deadline.Add(-time.Minute)
	}
	opts := connectors.DrainOptions{Deadline: deadline, EvictionRetry: 200 * time.Millisecond}
	_, err := kubernetes.NewDrainer(e.connector, kubernetes.DrainerConfig{Now: clock}).Drain(e.ctx, node, opts)

	if !errclass.IsPermanent(err) || !errors.Is(err, kubernetes.ErrDrainDeadline) {
		t.Fatalf("Drain: %v, want a Permanent ErrDrainDeadline", err)
	}
	if !strings.Contains(err.Error(), e.key("web-1")) {
		t.Errorf("error %q does not name the pod that stayed", err)
	}
	n := e.getNode(node)
	if n.Spec.Unschedulable || n.Annotations[kubernetes.AnnotationCordonedAt] != "" {
		t.Errorf("node after a drain past its deadline: unschedulable=%v annotations=%v, want uncordoned", n.Spec.Unschedulable, n.Annotations)
	}
	if _, err := e.admin.CoreV1().Pods(e.ns).Get(e.ctx, "web-1", metaGet); apierrors.IsNotFound(err) {
		t.Error("the budget-protected pod was evicted")
	}
}
