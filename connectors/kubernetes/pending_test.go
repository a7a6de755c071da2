package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/types"
)

// TestPendingMeansTriedAndRefusedAndNotNominated: of a burst of thousands
// of unbound pods, a pool counts as pending only those kube-scheduler
// tried and refused (PodScheduled=False, Unschedulable) and did not
// nominate a node for; untried pods (no condition yet) and nominated ones
// (preemption is making room) are not demand for a new node.
func TestPendingMeansTriedAndRefusedAndNotNominated(t *testing.T) {
	since := observedAt.Add(-time.Minute).Truncate(time.Second)
	const each = 1500
	var objs []runtime.Object
	for i := range each {
		objs = append(objs,
			newPod("web", fmt.Sprintf("refused-%d", i), tenant("acme", "shop", "api"), unschedulable(since), requesting("500m", "1Gi")),
			newPod("web", fmt.Sprintf("untried-%d", i), tenant("acme", "shop", "api"), requesting("500m", "1Gi")),
		)
		nominated := newPod("web", fmt.Sprintf("nominated-%d", i), tenant("acme", "shop", "api"), unschedulable(since), requesting("500m", "1Gi"))
		nominated.Status.NominatedNodeName = "n1"
		objs = append(objs, nominated)
	}
	client, _ := kubefake.NewClientset(kubefake.Options{}, objs...)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	api := got.Pools[apiPool.WorkflowID()]
	assert.Equal(t, each, api.PendingCount(), "only the refused, unnominated pods are pending")
	for _, pod := range api.PendingPods {
		assert.Regexp(t, `^refused-`, pod.Name)
	}

	// The watcher's wake-ups agree: nominating a refused pod ends its
	// pending, as binding does.
	o := NewObserver(client, observerConfig(nil))
	refused := newPod("web", "p", tenant("acme", "shop", "api"), unschedulable(since))
	nominated := refused.DeepCopy()
	nominated.Status.NominatedNodeName = "n1"
	var told []string
	o.podEvent(refused, nominated, func(id string) { told = append(told, id) })
	assert.Equal(t, []string{apiPool.WorkflowID(), apiPool.WorkflowID()}, told)
	_, pending := o.pendingSince(nominated)
	assert.False(t, pending)
}

// TestTheSchedulersLastTryIsReadFromItsStatusWrite: a pending pod's
// TriedAt is the time of kube-scheduler's latest status write, kept by
// the informer cache's transform (which drops every other managed-fields
// entry and the field sets), zero when the scheduler never wrote.
func TestTheSchedulersLastTryIsReadFromItsStatusWrite(t *testing.T) {
	since := observedAt.Add(-time.Minute).Truncate(time.Second)
	tried := metav1.NewTime(observedAt.Add(-10 * time.Second).Truncate(time.Second))
	first := metav1.NewTime(since)
	pod := newPod("web", "p", tenant("acme", "shop", "api"), unschedulable(since))
	pod.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Time: &tried, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}},
		{Manager: schedulerManager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &first},
		{Manager: schedulerManager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &tried, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}},
	}
	got, ok := pendingPod(pod)
	require.True(t, ok)
	assert.True(t, got.TriedAt.Equal(tried.Time), "TriedAt %s, want the latest scheduler write %s", got.TriedAt, tried)

	cached, err := dropManagedFields(pod.DeepCopy())
	require.NoError(t, err)
	kept := cached.(*corev1.Pod).ManagedFields
	require.Len(t, kept, 2, "only the scheduler's status writes are kept")
	for _, e := range kept {
		assert.Nil(t, e.FieldsV1)
	}
	assert.True(t, schedulerTriedAt(cached.(*corev1.Pod)).Equal(tried.Time))

	untried := newPod("web", "q", tenant("acme", "shop", "api"), unschedulable(since))
	got, _ = pendingPod(untried)
	assert.True(t, got.TriedAt.IsZero())
}

// TestABacklogOfUntriedPodsIsPendingWhileTheSchedulerRefuses: pods
// kube-scheduler has not tried within QueuedFor are pending (since their
// creation, with no try on record) while the scheduler recorded a refusal
// lately: it is working through a backlog and the cluster lacks room, so
// every pool's untried pods buy, those of a pool it has not reached yet
// too. Without a recent refusal (the scheduler may be down), or for
// another scheduler, they are not.
func TestABacklogOfUntriedPodsIsPendingWhileTheSchedulerRefuses(t *testing.T) {
	old := observedAt.Add(-time.Minute).Truncate(time.Second)
	created := func(at time.Time) podOption {
		return func(p *corev1.Pod) { p.CreationTimestamp, p.Status.Phase = metav1.NewTime(at), corev1.PodPending }
	}
	observe := func(lastRefusal time.Time) map[string]types.PoolObservation {
		var objs []runtime.Object
		for i := range 2000 {
			objs = append(objs, newPod("web", fmt.Sprintf("queued-%d", i), tenant("acme", "shop", "api"), created(old), requesting("500m", "1Gi")))
		}
		refused := newPod("web", "refused", tenant("acme", "shop", "api"), unschedulable(old), created(old), requesting("500m", "1Gi"))
		tried := metav1.NewTime(lastRefusal)
		refused.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: schedulerManager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &tried}}
		other := newPod("web", "other-scheduler", tenant("acme", "shop", "api"), created(old), requesting("500m", "1Gi"))
		other.Spec.SchedulerName = "volcano"
		objs = append(objs, refused, other,
			newPod("web", "just-created", tenant("acme", "shop", "api"), created(observedAt.Add(-time.Second)), requesting("500m", "1Gi")),
			// A pool the scheduler has not reached yet: nothing of it refused.
			newPod("ml", "not-reached", tenant("acme", "shop", "infer"), created(old), requesting("1", "1Gi")),
		)
		client, _ := kubefake.NewClientset(kubefake.Options{}, objs...)
		got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
		require.NoError(t, err)
		return got.Pools
	}

	pools := observe(observedAt.Add(-10 * time.Second))
	api := pools[apiPool.WorkflowID()]
	assert.Equal(t, 2001, api.PendingCount(), "the refused pod and the 2,000 queued past QueuedFor")
	assert.Equal(t, 2000, api.Queued)
	for _, pod := range api.PendingEntries() {
		if pod.Name != "refused" {
			assert.True(t, pod.TriedAt.Equal(old), "%s: a queued pod's last try on record is its creation", pod.Name)
		}
	}
	infer := pools[inferPool.WorkflowID()]
	assert.Equal(t, 1, infer.Queued, "a pool the scheduler has not reached buys for its backlog too")

	assert.Equal(t, 1, api.Unbound, "the pod created a second ago is not placed yet")

	pools = observe(observedAt.Add(-2 * SchedulerAliveWithin))
	api = pools[apiPool.WorkflowID()]
	assert.Equal(t, 1, api.PendingCount(), "no refusal lately: the backlog buys nothing")
	assert.Zero(t, api.Queued)
	assert.Equal(t, 2001, api.Unbound, "no refusal lately: the backlog still holds scale-down, another scheduler's pod does not")
	assert.Equal(t, 1, pools[inferPool.WorkflowID()].Unbound)
}

// TestUnboundCountsPodsTheSchedulerStillPlaces: a pod nominated to a node
// and one not tried yet hold the pool's scale-down; a scheduling-gated
// pod, a refused one, a terminating one and a bound one do not.
func TestUnboundCountsPodsTheSchedulerStillPlaces(t *testing.T) {
	created := func(p *corev1.Pod) {
		p.CreationTimestamp, p.Status.Phase = metav1.NewTime(observedAt.Add(-time.Second)), corev1.PodPending
	}
	nominated := newPod("web", "nominated", tenant("acme", "shop", "api"), created, unschedulable(observedAt.Add(-time.Minute)))
	nominated.Status.NominatedNodeName = "n1"
	gated := newPod("web", "gated", tenant("acme", "shop", "api"), created)
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/quota"}}
	deleting := newPod("web", "deleting", tenant("acme", "shop", "api"), created)
	deleting.DeletionTimestamp = &metav1.Time{Time: observedAt}
	bound := newPod("web", "bound", tenant("acme", "shop", "api"), created)
	bound.Spec.NodeName = "n1"
	objs := []runtime.Object{nominated, gated, deleting, bound,
		newPod("web", "new", tenant("acme", "shop", "api"), created),
		newPod("web", "refused", tenant("acme", "shop", "api"), created, unschedulable(observedAt.Add(-time.Minute))),
	}
	client, _ := kubefake.NewClientset(kubefake.Options{}, objs...)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	api := got.Pools[apiPool.WorkflowID()]
	assert.Equal(t, 2, api.Unbound, "the nominated pod and the one not tried yet")
	assert.Equal(t, 1, api.PendingCount(), "the refused pod")
}
