package sim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

const testCluster = "dev"

var (
	t0       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	smallPod = types.Resources{MilliCPU: 500, Memory: 512 * types.MiB}
)

// fakeClock is a settable clock shared by the fleet and the test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

func testPool(service string) types.PoolKey {
	return types.PoolKey{Org: "acme", Project: "shop", Service: service, Provider: "sim", Cluster: testCluster}
}

func testPoolOn(cluster string) types.PoolKey {
	p := testPool("web")
	p.Cluster = cluster
	return p
}

// newTestFleet builds a fleet on a fake clock starting at t0; edit adjusts
// the config first.
func newTestFleet(t *testing.T, edit func(*Config)) (*Fleet, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: t0}
	// SimSpot: the sim catalog with spot offerings, so tests may buy spot.
	cfg := Config{Cluster: testCluster, Clock: clock.Now, Seed: 1, Catalog: catalogs.SimSpot()}
	if edit != nil {
		edit(&cfg)
	}
	f, err := New(cfg)
	require.NoError(t, err)
	return f, clock
}

func createGroup(t *testing.T, f *Fleet, pool types.PoolKey, size string, target int, key string) connectors.NodeGroup {
	t.Helper()
	g, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: pool, Size: size, TargetSize: target}, connectors.IdempotencyKey(key))
	require.NoError(t, err)
	return g
}

func listNodes(t *testing.T, f *Fleet) []corev1.Node {
	t.Helper()
	l, err := f.Clientset().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return l.Items
}

func nodeNames(t *testing.T, f *Fleet) []string {
	t.Helper()
	var names []string
	for _, n := range listNodes(t, f) {
		names = append(names, n.Name)
	}
	return names
}

// workloadPods lists the pool's replicas (agent pods excluded).
func workloadPods(t *testing.T, f *Fleet, pool types.PoolKey) []corev1.Pod {
	t.Helper()
	l, err := f.Clientset().CoreV1().Pods(pool.Org).List(context.Background(), metav1.ListOptions{
		LabelSelector: types.LabelService + "=" + pool.Service,
	})
	require.NoError(t, err)
	return l.Items
}

func countBound(pods []corev1.Pod) (bound, pending int) {
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound++
		} else {
			pending++
		}
	}
	return bound, pending
}

func podCondition(p corev1.Pod, c corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == c {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func step(t *testing.T, f *Fleet, now time.Time) {
	t.Helper()
	require.NoError(t, f.Step(now))
}

// newLoadedFleet is a fleet whose "web" pool runs pods small pods on a
// group of nodes of size, stepped once so they are bound.
func newLoadedFleet(t *testing.T, size string, nodes, pods int) (*Fleet, *fakeClock, types.PoolKey, connectors.NodeGroup) {
	t.Helper()
	f, clock := newTestFleet(t, nil)
	pool := testPool("web")
	require.NoError(t, f.AddDemand(pool, Steady(pods, smallPod)))
	g := createGroup(t, f, pool, size, nodes, "setup")
	step(t, f, clock.Now())
	return f, clock, pool, g
}

func podsOn(t *testing.T, f *Fleet, pool types.PoolKey, node string) int {
	t.Helper()
	n := 0
	for _, p := range workloadPods(t, f, pool) {
		if p.Spec.NodeName == node {
			n++
		}
	}
	return n
}
