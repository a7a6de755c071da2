package sim

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// clusterView is what must survive a restart, in a comparable form.
type clusterView struct {
	Nodes map[string]bool   // name → Ready
	Pods  map[string]string // namespace/name → node
}

func viewOf(t *testing.T, f *Fleet) clusterView {
	t.Helper()
	v := clusterView{Nodes: map[string]bool{}, Pods: map[string]string{}}
	for _, n := range listNodes(t, f) {
		v.Nodes[n.Name] = nodeReady(&n)
	}
	pods, err := f.Clientset().CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pods.Items {
		v.Pods[p.Namespace+"/"+p.Name] = p.Spec.NodeName
	}
	return v
}

func TestStateSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "fleet.json")
	withPath := func(c *Config) { c.StatePath = path; c.ProvisionDelay = 20 * time.Second }
	f, clock := newTestFleet(t, withPath)
	ctx := context.Background()
	web, api := testPool("web"), testPool("api")
	require.NoError(t, f.AddDemand(web, Steady(4, smallPod)))
	require.NoError(t, f.AddDemand(api, Burst(1, 3, time.Minute, 20*time.Second, smallPod)))
	g := createGroup(t, f, web, "sim-2c4g", 2, "k1")
	step(t, f, clock.Advance(20*time.Second))
	require.NoError(t, f.SetTargetSize(ctx, g.ID, 3, "k2")) // one node still booting
	step(t, f, clock.Advance(time.Second))
	before := viewOf(t, f)
	groupsBefore, err := f.NodeGroups(ctx, web)
	require.NoError(t, err)
	unschedulable := pendingSince(t, f, api)
	require.NotEmpty(t, unschedulable)

	restarted, clock2 := newTestFleet(t, withPath)
	clock2.Advance(21 * time.Second)
	assert.Equal(t, before, viewOf(t, restarted), "same nodes and pods, bound the same")
	groupsAfter, err := restarted.NodeGroups(ctx, web)
	require.NoError(t, err)
	assert.Equal(t, groupsBefore, groupsAfter)
	assert.Equal(t, unschedulable, pendingSince(t, restarted, api), "pending clocks survive")

	// Applied keys survive: repeats are recognised, not re-applied.
	again := createGroup(t, restarted, web, "sim-2c4g", 2, "k1")
	assert.Equal(t, g.ID, again.ID)
	require.NoError(t, restarted.SetTargetSize(ctx, g.ID, 3, "k2"))

	// Stepping at the same moment changes nothing: demand clocks resumed.
	step(t, restarted, clock2.Now())
	after := viewOf(t, restarted)
	assert.Equal(t, len(before.Pods), len(after.Pods))

	// The booting node finishes booting on schedule, and new machines get
	// fresh names.
	step(t, restarted, clock2.Advance(20*time.Second))
	for name, ready := range viewOf(t, restarted).Nodes {
		assert.True(t, ready, "%s booted", name)
	}
	require.NoError(t, restarted.SetTargetSize(ctx, g.ID, 4, "k3"))
	names := nodeNames(t, restarted)
	sort.Strings(names)
	assert.Len(t, names, 4)
	for i := 1; i < len(names); i++ {
		assert.NotEqual(t, names[i-1], names[i])
	}

	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files are left behind")
}

func pendingSince(t *testing.T, f *Fleet, pool types.PoolKey) map[string]time.Time {
	t.Helper()
	pods, err := f.Clientset().CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]time.Time{}
	for _, p := range pods.Items {
		if p.Spec.NodeSelector[types.LabelPool] != pool.NodePoolLabel() {
			continue
		}
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
			out[p.Name] = c.LastTransitionTime.Time.UTC()
		}
	}
	return out
}

func TestBadStateFilesAreRefusedWithTheirPath(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte("{not json"), 0o644))
	_, err := New(Config{Cluster: testCluster, StatePath: corrupt})
	require.Error(t, err)
	assert.Contains(t, err.Error(), corrupt)

	other := filepath.Join(dir, "other.json")
	f, err := New(Config{Cluster: "prod", StatePath: other})
	require.NoError(t, err)
	_, err = f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{
		Pool: testPoolOn("prod"), Size: "sim-2c4g", TargetSize: 1,
	}, "k1")
	require.NoError(t, err)
	_, err = New(Config{Cluster: testCluster, StatePath: other})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `belongs to cluster "prod"`)
}

func TestRunStepsUntilCancelledThenSaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	f, err := New(Config{Cluster: testCluster, StatePath: path})
	require.NoError(t, err)
	require.Error(t, f.Run(context.Background(), 0), "a tick must be positive")
	require.NoError(t, f.AddDemand(testPool("web"), Steady(2, smallPod)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, 5*time.Millisecond) }()
	require.Eventually(t, func() bool { return len(workloadPods(t, f, testPool("web"))) == 2 }, 5*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	restarted, err := New(Config{Cluster: testCluster, StatePath: path})
	require.NoError(t, err)
	assert.Len(t, workloadPods(t, restarted, testPool("web")), 2)
}

// A save cut short by a kill leaves its temp file; the next start removes
// it (and only this state file's) and reads the state as saved.
func TestStartRemovesLeftoversOfCutShortSaves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.json")
	f, err := New(Config{Cluster: testCluster, StatePath: path})
	require.NoError(t, err)
	require.NoError(t, f.Save())
	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	leftovers := []string{path + ".tmp-123456", path + ".tmp-"}
	for _, name := range leftovers {
		require.NoError(t, os.WriteFile(name, []byte(`{"version":1,"half":`), 0o644))
	}
	other := filepath.Join(dir, "other.json.tmp-42")
	require.NoError(t, os.WriteFile(other, nil, 0o644))

	_, err = New(Config{Cluster: testCluster, StatePath: path})
	require.NoError(t, err)
	for _, name := range leftovers {
		assert.NoFileExists(t, name)
	}
	assert.FileExists(t, other, "another state file's save was removed")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, saved, after)
}
