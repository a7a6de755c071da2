package kubernetes

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
)

const testRetry = 10 * time.Millisecond

func drainOptions(deadline time.Duration, progress func(connectors.DrainProgress)) connectors.DrainOptions {
	return connectors.DrainOptions{Deadline: time.Now().Add(deadline), EvictionRetry: testRetry, Progress: progress}
}

func pdb(namespace, name string, allowed int32, matchLabels map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

func getNode(t *testing.T, client *fake.Clientset, name string) *corev1.Node {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

func podNames(t *testing.T, client *fake.Clientset) []string {
	t.Helper()
	list, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for i := range list.Items {
		names = append(names, podKey(&list.Items[i]))
	}
	return names
}

// mutations counts the calls that would change the cluster.
func mutations(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			n++
		}
	}
	return n
}

func TestDrainEvictsThroughPDBsAndSkipsNodeLocalPods(t *testing.T) {
	client, fakes := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newNode("n2", apiPool.NodePoolLabel()),
		newPod("web", "a", onNode("n1"), labelled("tier", "web")),
		newPod("web", "b", onNode("n1"), labelled("tier", "web")),
		newPod("web", "c", onNode("n1"), unreplicated(), annotate(AnnotationSafeToEvict, "true")),
		newPod("web", "done", onNode("n1"), unreplicated(), phase(corev1.PodFailed)),
		newPod("kube-system", "agent", onNode("n1"), ownedBy("DaemonSet")),
		newPod("kube-system", "etcd-n1", onNode("n1"), mirror()),
		newPod("web", "elsewhere", onNode("n2"), labelled("tier", "web")),
		// Allows one disruption now; the "disruption controller" below
		// grants another once the first evicted pod is replaced.
		pdb("web", "web-pdb", 1, map[string]string{"tier": "web"}),
	)
	var mu sync.Mutex
	var progress []connectors.DrainProgress
	regrant := sync.OnceFunc(func() {
		go func() {
			time.Sleep(3 * testRetry)
			budget := pdb("web", "web-pdb", 1, map[string]string{"tier": "web"})
			_, err := client.PolicyV1().PodDisruptionBudgets("web").UpdateStatus(context.Background(), budget, metav1.UpdateOptions{})
			assert.NoError(t, err)
		}()
	})
	opts := drainOptions(5*time.Second, func(p connectors.DrainProgress) {
		mu.Lock()
		progress = append(progress, p)
		mu.Unlock()
		if len(p.Evicted) == 1 {
			regrant()
		}
	})

	res, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", opts)
	require.NoError(t, err)

	assert.ElementsMatch(t, []string{"web/a", "web/b", "web/c"}, res.Evicted)
	assert.Equal(t, []string{"kube-system/agent", "kube-system/etcd-n1"}, res.Skipped)
	for _, name := range []string{"a", "b", "c"} {
		assert.Equal(t, 1, fakes.Evictions("web", name), name)
	}
	assert.Greater(t, fakes.EvictionAttempts("web", "a")+fakes.EvictionAttempts("web", "b"), 2,
		"the budget refused one eviction (429) before it was retried")
	assert.Zero(t, fakes.EvictionAttempts("web", "elsewhere"), "pods on other nodes are left alone")
	assert.Zero(t, fakes.EvictionAttempts("web", "done"), "finished pods are not evicted")
	assert.ElementsMatch(t, []string{"web/elsewhere", "web/done", "kube-system/agent", "kube-system/etcd-n1"}, podNames(t, client))

	n1 := getNode(t, client, "n1")
	assert.True(t, n1.Spec.Unschedulable, "a drained node stays cordoned for deletion")
	assert.NotEmpty(t, n1.Annotations[AnnotationCordonedAt])

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, progress)
	assert.True(t, progress[0].Cordoned)
	assert.Empty(t, progress[0].Evicted, "the first report is the cordon")
	assert.Len(t, progress[len(progress)-1].Evicted, 3)
}

// A pod marked safe-to-evict=false or (Karpenter's) do-not-disrupt=true
// refuses the drain, changing nothing; do-not-disrupt wins over
// safe-to-evict=true on the same pod.
func TestDrainRefusesPodsThatMustNotBeEvictedChangingNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		marks []podOption
		why   string
	}{
		"safe-to-evict=false": {[]podOption{annotate(AnnotationSafeToEvict, "false")}, AnnotationSafeToEvict + "=false"},
		"do-not-disrupt":      {[]podOption{annotate(AnnotationDoNotDisrupt, "true")}, AnnotationDoNotDisrupt + "=true"},
		"do-not-disrupt wins": {[]podOption{annotate(AnnotationSafeToEvict, "true"), annotate(AnnotationDoNotDisrupt, "true")}, AnnotationDoNotDisrupt + "=true"},
	} {
		t.Run(name, func(t *testing.T) {
			client, fakes := kubefake.NewClientset(kubefake.Options{},
				newNode("n1", apiPool.NodePoolLabel()),
				newPod("web", "a", onNode("n1")),
				newPod("db", "primary", append([]podOption{onNode("n1")}, tc.marks...)...),
			)
			_, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(time.Second, nil))

			require.ErrorIs(t, err, ErrDrainRefused)
			assert.True(t, errclass.IsPermanent(err))
			assert.Contains(t, err.Error(), "db/primary: "+tc.why)
			assert.Zero(t, mutations(client), "nothing is cordoned or evicted")
			assert.Zero(t, fakes.EvictionAttempts("web", "a"))
			assert.Zero(t, fakes.EvictionAttempts("db", "primary"))
			assert.False(t, getNode(t, client, "n1").Spec.Unschedulable)
		})
	}
}

// do-not-disrupt other than "true" is no opt-out.
func TestDrainEvictsDoNotDisruptFalse(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("ml", "train", onNode("n1"), annotate(AnnotationDoNotDisrupt, "false")),
	)
	res, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(5*time.Second, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"ml/train"}, res.Evicted)
}

func TestDrainRefusesUnreplicatedPod(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("web", "a", onNode("n1")),
		newPod("web", "bare", onNode("n1"), unreplicated()),
	)
	_, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(time.Second, nil))

	require.ErrorIs(t, err, ErrDrainRefused)
	assert.Contains(t, err.Error(), "web/bare: unreplicated")
	assert.Zero(t, mutations(client))
}

func TestResumedDrainUndoesItsCordonWhenABlockerAppeared(t *testing.T) {
	node := newNode("n1", apiPool.NodePoolLabel(), cordoned())
	node.Annotations = map[string]string{AnnotationCordonedAt: "2026-03-01T12:00:00Z"}
	client, _ := kubefake.NewClientset(kubefake.Options{}, node, newPod("web", "bare", onNode("n1"), unreplicated()))

	_, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(time.Second, nil))

	require.ErrorIs(t, err, ErrDrainRefused)
	n1 := getNode(t, client, "n1")
	assert.False(t, n1.Spec.Unschedulable, "the cordon was ours, so it is undone")
	assert.NotContains(t, n1.Annotations, AnnotationCordonedAt)
}

func TestDrainPastDeadlineUncordonsAndNamesThePods(t *testing.T) {
	client, fakes := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("web", "a", onNode("n1"), labelled("tier", "web")),
		newPod("web", "free", onNode("n1")),
		pdb("web", "web-pdb", 0, map[string]string{"tier": "web"}),
	)
	// The clock moves 10ms per refused eviction of "a", so the deadline
	// passes after exactly three attempts however slow the machine is.
	base := time.Now()
	clock := func() time.Time {
		return base.Add(time.Duration(fakes.EvictionAttempts("web", "a")) * testRetry)
	}
	opts := drainOptions(0, nil)
	opts.Deadline = base.Add(25 * time.Millisecond)
	res, err := NewDrainer(client, DrainerConfig{Now: clock}).Drain(context.Background(), "n1", opts)

	require.ErrorIs(t, err, ErrDrainDeadline)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "web/a")
	assert.Contains(t, err.Error(), "uncordoned")
	assert.Equal(t, []string{"web/free"}, res.Evicted)
	assert.Equal(t, 3, fakes.EvictionAttempts("web", "a"), "429 was retried until the deadline")
	assert.Zero(t, fakes.Evictions("web", "a"))
	n1 := getNode(t, client, "n1")
	assert.False(t, n1.Spec.Unschedulable)
	assert.NotContains(t, n1.Annotations, AnnotationCordonedAt)
}

func TestDrainPastDeadlineLeavesAnOperatorsCordon(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel(), cordoned()),
		newPod("web", "a", onNode("n1"), labelled("tier", "web")),
		pdb("web", "web-pdb", 0, map[string]string{"tier": "web"}),
	)
	_, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(30*time.Millisecond, nil))

	require.ErrorIs(t, err, ErrDrainDeadline)
	assert.Contains(t, err.Error(), "left cordoned by someone else")
	assert.True(t, getNode(t, client, "n1").Spec.Unschedulable)
}

func TestDrainInterruptedAndResumedEvictsEachPodOnce(t *testing.T) {
	client, fakes := kubefake.NewClientset(kubefake.Options{GracefulEviction: true},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("web", "a", onNode("n1")),
		newPod("web", "b", onNode("n1")),
		newPod("web", "c", onNode("n1")),
		newPod("web", "d", onNode("n1")),
		newPod("kube-system", "agent", onNode("n1"), ownedBy("DaemonSet")),
	)
	drainer := NewDrainer(client, DrainerConfig{})

	// The worker dies after two evictions: its context is cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	first, err := drainer.Drain(ctx, "n1", drainOptions(5*time.Second, func(p connectors.DrainProgress) {
		if len(p.Evicted) == 2 {
			cancel()
		}
	}))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, errclass.Retryable, errclass.Of(err))
	assert.Equal(t, []string{"web/a", "web/b"}, first.Evicted)
	assert.True(t, getNode(t, client, "n1").Spec.Unschedulable, "a cancelled drain stays cordoned for its resumption")

	// Kubelets finish terminating pods while the drain resumes.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * testRetry):
				_, _ = fakes.FinishTerminating()
			}
		}
	}()
	second, err := drainer.Drain(context.Background(), "n1", drainOptions(5*time.Second, nil))
	require.NoError(t, err)

	assert.Equal(t, []string{"web/c", "web/d"}, second.Evicted, "the resumed drain does only what was left")
	for _, name := range []string{"a", "b", "c", "d"} {
		assert.Equal(t, 1, fakes.EvictionAttempts("web", name), "eviction calls for %s", name)
		assert.Equal(t, 1, fakes.Evictions("web", name), "evictions of %s", name)
	}
	assert.Equal(t, []string{"kube-system/agent"}, podNames(t, client), "the drain waited until the pods were gone")
}

func TestDrainWaitsForTerminatingPods(t *testing.T) {
	client, fakes := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("web", "leaving", onNode("n1"), unreplicated(), terminating()),
	)
	done := make(chan error, 1)
	var waiting atomic.Int32
	go func() {
		_, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(5*time.Second,
			func(p connectors.DrainProgress) {
				if slices.Equal(p.Remaining, []string{"web/leaving"}) {
					waiting.Add(1)
				}
			}))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("drain returned while a pod was still terminating: %v", err)
	case <-time.After(5 * testRetry):
	}
	assert.Greater(t, waiting.Load(), int32(2), "the drain keeps reporting while it waits, so activities heartbeat")
	gone, err := fakes.FinishTerminating()
	require.NoError(t, err)
	require.Equal(t, 1, gone)
	require.NoError(t, <-done)
	assert.Zero(t, fakes.EvictionAttempts("web", "leaving"), "a terminating pod is already leaving")
}

func TestDrainTreatsVanishedAndReplacedPodsAsGone(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("web", "vanished", onNode("n1")),
		newPod("web", "replaced", onNode("n1")),
	)
	// Between the list and the eviction one pod is deleted and the other
	// recreated under its name: 404 and a UID conflict both mean "gone".
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		name := action.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction).Name
		_ = client.Tracker().Delete(podsGVR, "web", name)
		if name == "vanished" {
			return true, nil, apierrors.NewNotFound(podsGVR.GroupResource(), name)
		}
		return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), name, errors.New("precondition failed: UID"))
	})
	res, err := NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", drainOptions(time.Second, nil))
	require.NoError(t, err)
	assert.Empty(t, res.Evicted, "nothing was evicted by this drain")
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func TestDrainRejectsBadInput(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{}, newNode("n1", apiPool.NodePoolLabel()))
	drainer := NewDrainer(client, DrainerConfig{})

	_, err := drainer.Drain(context.Background(), "", drainOptions(time.Second, nil))
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "not a valid node name")

	_, err = drainer.Drain(context.Background(), "n1", connectors.DrainOptions{})
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "Deadline is not set")
	assert.Empty(t, client.Actions())

	_, err = drainer.Drain(context.Background(), "missing", drainOptions(time.Second, nil))
	assert.True(t, errclass.IsNotFound(err))
}

func TestCordonIsIdempotentAndUncordonClearsTheMark(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{}, newNode("n1", apiPool.NodePoolLabel()))
	clock := func() time.Time { return observedAt }
	drainer := NewDrainer(client, DrainerConfig{Now: clock})
	ctx := context.Background()

	require.NoError(t, drainer.Cordon(ctx, "n1"))
	require.NoError(t, drainer.Cordon(ctx, "n1"))
	patches := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			patches++
		}
	}
	assert.Equal(t, 1, patches, "cordoning a cordoned node sends nothing")
	n1 := getNode(t, client, "n1")
	assert.True(t, n1.Spec.Unschedulable)
	assert.Equal(t, "2026-03-01T12:00:00Z", n1.Annotations[AnnotationCordonedAt])

	require.NoError(t, drainer.Uncordon(ctx, "n1"))
	n1 = getNode(t, client, "n1")
	assert.False(t, n1.Spec.Unschedulable)
	assert.NotContains(t, n1.Annotations, AnnotationCordonedAt)

	assert.True(t, errclass.IsNotFound(drainer.Uncordon(ctx, "gone")))
}

// A PodDisruptionBudget that allows no disruption stops the drain once it
// has refused every pod left for the patience, long before the deadline:
// the node is uncordoned and the error names the pod and its budget.
func TestDrainStopsOnABudgetThatAllowsNothing(t *testing.T) {
	client, fakes := kubefake.NewClientset(kubefake.Options{},
		newNode("n1", apiPool.NodePoolLabel()),
		newPod("web", "a", onNode("n1"), labelled("tier", "web")),
		newPod("web", "free", onNode("n1")),
		pdb("web", "web-pdb", 0, map[string]string{"tier": "web"}),
	)
	res, err := NewDrainer(client, DrainerConfig{BudgetPatience: 3 * testRetry}).Drain(context.Background(), "n1", drainOptions(time.Minute, nil))

	require.ErrorIs(t, err, ErrDrainRefused)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "web/a: its PodDisruptionBudget allows no disruption now")
	assert.Contains(t, err.Error(), "web-pdb")
	assert.Equal(t, []string{"web/free"}, res.Evicted)
	assert.GreaterOrEqual(t, fakes.EvictionAttempts("web", "a"), 2, "the budget was asked more than once")
	assert.Zero(t, fakes.Evictions("web", "a"))
	assert.False(t, getNode(t, client, "n1").Spec.Unschedulable, "the cordon was ours, so it is undone")
}
