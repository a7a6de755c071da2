package activities

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/mocks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// oneCluster serves its cluster's provider through connectors.Checked, as
// a worker does: providers leave argument checks to it.
type oneCluster struct{ c connectors.Cluster }

func (s oneCluster) Cluster(context.Context, string) (connectors.Cluster, error) {
	c := s.c
	c.Provider = connectors.Checked(c.Provider)
	return c, nil
}

// observes counts the observe signals each pool got, with the last one.
type observes struct {
	mu   sync.Mutex
	n    map[string]int
	last map[string]types.PoolObservation
	at   map[string][]time.Time
}

func (o *observes) times(id string) []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Time(nil), o.at[id]...)
}

func (o *observes) count(id string) (int, types.PoolObservation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[id], o.last[id]
}

func unschedulablePod(name, service string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Labels: map[string]string{
			types.LabelOrg: "acme", types.LabelProject: "web", types.LabelService: service}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))}}},
	}
}

// With informers, pod events wake the watcher between samples: a burst of
// 500 events for one pool costs it at most two observes a second, and
// events for two pools reach both.
func TestWatcherCoalescesInformerEventsPerPool(t *testing.T) {
	client, _ := kubefake.NewClientset(kubefake.Options{})
	coalescedBurst(t, client, func(name, service string) {
		create(t, client, unschedulablePod(name, service))
	})
}

// coalescedBurst runs the watcher with informers on client, adds 500
// pending pods of one pool with addPending, and checks that the pool got
// at most one observe per EventInterval (two in any window), that the last
// one saw all 500, and that a pod of another pool reaches that pool. It
// returns the observes the burst cost and how long the burst took.
func coalescedBurst(t *testing.T, client k8s.Interface, addPending func(name, service string)) (int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	obs := kubernetes.NewObserver(client, kubernetes.Config{Cluster: "east", Provider: "sim", Informers: true})
	defer obs.Close(ctx)

	api := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}.WorkflowID()
	batch := types.PoolKey{Org: "acme", Project: "web", Service: "batch", Provider: "sim", Cluster: "east"}.WorkflowID()
	temporal := mocks.NewClient(t)
	registers(temporal, "east", map[string]contract.PoolThresholds{api: {}, batch: {}})
	seen := &observes{n: map[string]int{}, last: map[string]types.PoolObservation{}, at: map[string][]time.Time{}}
	temporal.On("SignalWorkflow", mock.Anything, mock.Anything, "", contract.SignalObserve, mock.Anything).Run(func(args mock.Arguments) {
		seen.mu.Lock()
		defer seen.mu.Unlock()
		id := args.String(1)
		seen.n[id]++
		seen.at[id] = append(seen.at[id], time.Now())
		seen.last[id] = args.Get(4).(types.PoolObservation)
	}).Return(nil)
	temporal.On("SignalWorkflow", mock.Anything, "cluster/east", "", contract.SignalWatcherReport, mock.Anything).Return(nil)

	a := &Activities{Temporal: temporal, Clusters: oneCluster{connectors.Cluster{ID: "east", Observer: obs}}}
	w := &watcher{a: a, cluster: connectors.Cluster{ID: "east", Observer: obs}, sent: &clusterSent{fp: map[string]string{}}, log: log.NewStructuredLogger(slog.New(slog.DiscardHandler))}
	done := make(chan error, 1)
	go func() {
		// One sample at the start, then only events (the next is an hour off).
		done <- w.run(ctx, WatchInput{Cluster: "east", SampleInterval: types.Duration(time.Hour), RefreshInterval: types.Duration(time.Hour)}, func(WatchProgress) {})
	}()
	eventually(t, func() bool { n, _ := seen.count(api); m, _ := seen.count(batch); return n == 1 && m == 1 }, "full state to both pools at start")

	start := time.Now()
	for i := range 500 {
		addPending(fmt.Sprintf("api-%03d", i), "api")
	}
	burst := time.Since(start)
	eventually(t, func() bool { _, last := seen.count(api); return last.PendingCount() == 500 }, "the burst's 500 pods observed")
	time.Sleep(2 * EventInterval) // nothing more may come
	n, _ := seen.count(api)
	t.Logf("500 pending pods in %s: %d observes", burst.Round(time.Millisecond), n-1)
	// One at the first event, then at most one per interval: no second
	// of the burst (however long the server took to make it) holds more
	// than two.
	at := seen.times(api)[1:]
	for i := range at {
		inWindow := 0
		for _, t2 := range at[i:] {
			if t2.Sub(at[i]) < EventInterval {
				inWindow++
			}
		}
		require.LessOrEqual(t, inWindow, 2, "observes within one second of the burst")
	}
	require.LessOrEqual(t, n-1, 2+int(burst/EventInterval), "observes for the burst")
	if m, _ := seen.count(batch); m != 1 {
		t.Fatalf("the other pool got %d observes, want only its first", m)
	}

	addPending("api-new", "api")
	addPending("batch-new", "batch")
	eventually(t, func() bool {
		_, a := seen.count(api)
		_, b := seen.count(batch)
		return a.PendingCount() == 501 && b.PendingCount() == 1
	}, "events for two pools signal both")
	cancel()
	<-done
	return n - 1, burst
}

// registers answers the cluster workflow's status query with pools, as
// the watcher reads them.
func registers(temporal *mocks.Client, cluster string, pools map[string]contract.PoolThresholds) {
	status := &mocks.Value{}
	status.On("Get", mock.Anything).Run(func(args mock.Arguments) {
		*args.Get(0).(*contract.ClusterStatus) = contract.ClusterStatus{Pools: pools}
	}).Return(nil)
	temporal.On("QueryWorkflow", mock.Anything, types.ClusterWorkflowID(cluster), "", contract.QueryClusterStatus).Return(status, nil)
}

func create(t *testing.T, client k8s.Interface, pod *corev1.Pod) {
	t.Helper()
	_, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
}

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting: %s", what)
}

func TestCoalescerLetsOnePoolThroughOncePerInterval(t *testing.T) {
	c := newCoalescer(time.Second)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	c.note("a")
	due, next := c.due(t0)
	require.Equal(t, []string{"a"}, due)
	require.True(t, next.IsZero())
	c.sent(due, t0)
	for range 100 {
		c.note("a")
	}
	c.note("b")
	due, next = c.due(t0.Add(100 * time.Millisecond))
	require.Equal(t, []string{"b"}, due, "a waits for its interval, b goes at once")
	require.Equal(t, t0.Add(time.Second), next)
	c.sent(due, t0.Add(100*time.Millisecond))
	due, _ = c.due(t0.Add(time.Second))
	require.Equal(t, []string{"a"}, due, "a's hundred events are one sample")
	due, next = c.due(t0.Add(2 * time.Second))
	require.Empty(t, due)
	require.True(t, next.IsZero())
}
