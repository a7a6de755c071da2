package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

func TestCreateNodeGroupRegistersLabelledNodesWithCatalogAllocatable(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	pool := testPool("web")
	g := createGroup(t, f, pool, "sim-4c8g", 2, "k1")

	assert.Equal(t, 2, g.TargetSize)
	assert.Equal(t, "sim-4c8g", g.Size)
	assert.Equal(t, pool.NodePoolLabel(), g.Labels[types.LabelPool])
	assert.Equal(t, "web", g.Labels[types.LabelService])
	require.Len(t, g.Instances, 2)
	for _, in := range g.Instances {
		assert.Equal(t, connectors.InstanceCreating, in.State)
	}

	var medium types.InstanceType
	for _, it := range catalogs.Sim() {
		if it.Name == "sim-4c8g" {
			medium = it
		}
	}
	nodes := listNodes(t, f)
	require.Len(t, nodes, 2)
	for _, n := range nodes {
		assert.Equal(t, pool.NodePoolLabel(), n.Labels[types.LabelPool])
		assert.Equal(t, "sim-4c8g", n.Labels[corev1.LabelInstanceTypeStable])
		assert.Equal(t, "acme", n.Labels[types.LabelOrg])
		assert.False(t, nodeReady(&n), "a new node is NotReady until it boots")
		alloc := medium.Allocatable()
		assert.Equal(t, alloc.MilliCPU, n.Status.Allocatable.Cpu().MilliValue())
		assert.Equal(t, alloc.Memory, n.Status.Allocatable.Memory().Value())
		assert.Equal(t, medium.MilliCPU, n.Status.Capacity.Cpu().MilliValue())
		assert.Equal(t, alloc.Pods, n.Status.Allocatable.Pods().Value())
		assert.Contains(t, n.Spec.ProviderID, "sim://dev/")
	}

	groups, err := f.NodeGroups(context.Background(), pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, g.ID, groups[0].ID)
	other, err := f.NodeGroups(context.Background(), testPool("api"))
	require.NoError(t, err)
	assert.Empty(t, other)
}

func TestGPUSizeAdvertisesGPUs(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	createGroup(t, f, testPool("ml"), "sim-gpu-8c32g-1xa10", 1, "k1")
	n := listNodes(t, f)[0]
	q := n.Status.Allocatable[kubernetes.ResourceGPU]
	assert.Equal(t, int64(1), q.Value())
}

func TestCreateNodeGroupSameKeyReturnsSameGroup(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	a := createGroup(t, f, testPool("web"), "sim-2c4g", 3, "same")
	b := createGroup(t, f, testPool("web"), "sim-2c4g", 3, "same")
	assert.Equal(t, a.ID, b.ID)
	assert.Len(t, listNodes(t, f), 3)

	_, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-8c16g", TargetSize: 3}, "same")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "a key reused for another request is refused: %v", err)
	assert.Contains(t, err.Error(), "already used")
	assert.Len(t, listNodes(t, f), 3)
}

// The sim refuses what only it knows to be wrong (its catalog, its
// cluster, its quota, the pool's own labels); what is wrong for every
// provider connectors.Checked refuses before the sim is called, so the
// sim is asked through it here, as every worker asks it.
func TestBadRequestsAreRefusedAndChangeNothing(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	p := connectors.Checked(f)
	ctx := context.Background()
	wrongCluster := testPool("web")
	wrongCluster.Cluster = "prod"
	cases := []struct {
		name string
		spec connectors.NodeGroupSpec
		key  connectors.IdempotencyKey
		want string
	}{
		{"unknown size", connectors.NodeGroupSpec{Pool: testPool("web"), Size: "m5.huge", TargetSize: 1}, "k", `does not sell size "m5.huge"`},
		{"negative target", connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-2c4g", TargetSize: -1}, "k", "spec.targetSize: target -1"},
		{"other cluster", connectors.NodeGroupSpec{Pool: wrongCluster, Size: "sim-2c4g", TargetSize: 1}, "k", `cluster "prod"`},
		{"bad pool part", connectors.NodeGroupSpec{Pool: testPool("Web_1"), Size: "sim-2c4g", TargetSize: 1}, "k", "service"},
		{"pool label overridden", connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-2c4g", TargetSize: 1, Labels: map[string]string{types.LabelPool: "x"}}, "k", "hanzo.ai/pool"},
		{"empty key", connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-2c4g", TargetSize: 1}, "", "idempotency key is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.CreateNodeGroup(ctx, c.spec, c.key)
			require.Error(t, err)
			assert.True(t, errclass.IsPermanent(err))
			assert.Contains(t, err.Error(), c.want)
		})
	}
	assert.Empty(t, listNodes(t, f))
	assert.Empty(t, f.st.Groups)
	assert.Empty(t, f.st.Keys)

	g := createGroup(t, f, testPool("web"), "sim-2c4g", 1, "ok")
	assert.True(t, errclass.IsNotFound(p.SetTargetSize(ctx, "ng-404", 2, "k2")))
	err := p.SetTargetSize(ctx, g.ID, maxGroupTarget+1, "k3")
	assert.True(t, errclass.IsPermanent(err))
	assert.ErrorContains(t, err, "per-group quota", "the sim's own limit, under Checked's")
	assert.True(t, errclass.IsPermanent(p.SetTargetSize(ctx, g.ID, -1, "k4")))
	assert.True(t, errclass.IsPermanent(p.SetTargetSize(ctx, g.ID, 2, "")))
	assert.True(t, errclass.IsPermanent(p.DeleteNodes(ctx, g.ID, []string{""}, "k5")))
	assert.NoError(t, p.DeleteNodes(ctx, g.ID, nil, "k6"), "naming nothing deletes nothing")
	assert.Len(t, listNodes(t, f), 1)
}

func TestSetTargetSizeLaunchesAndRemovesNewestFirst(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	ctx := context.Background()
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 1, "k1")
	first := g.Instances[0].Name

	require.NoError(t, f.SetTargetSize(ctx, g.ID, 4, "k2"))
	assert.Len(t, listNodes(t, f), 4)
	require.NoError(t, f.SetTargetSize(ctx, g.ID, 4, "k2"), "a repeat is a no-op")
	require.NoError(t, f.SetTargetSize(ctx, g.ID, 4, "k3"), "the same target twice is a no-op")
	assert.Len(t, listNodes(t, f), 4)

	require.NoError(t, f.SetTargetSize(ctx, g.ID, 1, "k4"))
	assert.Equal(t, []string{first}, nodeNames(t, f))
	step(t, f, clock.Advance(time.Minute))
	assert.Equal(t, []string{first}, nodeNames(t, f))
}

func TestDeleteNodesLowersTargetAndNodesAreNotReplaced(t *testing.T) {
	f, clock, pool, g := newLoadedFleet(t, "sim-2c4g", 3, 4)
	ctx := context.Background()
	bound, pending := countBound(workloadPods(t, f, pool))
	require.Equal(t, 4, bound+pending)

	victim := g.Instances[0].Name
	require.NoError(t, f.DeleteNodes(ctx, g.ID, []string{victim}, "d1"))
	groups, err := f.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 2, groups[0].TargetSize)
	assert.Len(t, groups[0].Instances, 2)
	assert.NotContains(t, nodeNames(t, f), victim)

	for range 5 {
		step(t, f, clock.Advance(10*time.Second))
	}
	assert.Len(t, listNodes(t, f), 2, "deleted nodes are not replaced")
	assert.NotContains(t, nodeNames(t, f), victim)
	for _, p := range workloadPods(t, f, pool) {
		assert.NotEqual(t, victim, p.Spec.NodeName, "pods of a deleted node are gone")
	}
	assert.Len(t, workloadPods(t, f, pool), 4, "demand recreates the replicas the node took with it")

	// A retry, and a new call naming a node already gone, are success and
	// lower nothing further.
	require.NoError(t, f.DeleteNodes(ctx, g.ID, []string{victim}, "d1"))
	require.NoError(t, f.DeleteNodes(ctx, g.ID, []string{victim}, "d2"))
	groups, _ = f.NodeGroups(ctx, pool)
	assert.Equal(t, 2, groups[0].TargetSize)

	other := createGroup(t, f, testPool("api"), "sim-2c4g", 1, "k2")
	err = f.DeleteNodes(ctx, g.ID, []string{groups[0].Instances[0].Name, other.Instances[0].Name}, "d3")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "belongs to group "+other.ID)
	assert.Len(t, listNodes(t, f), 3, "a refused delete removes nothing")
}

func TestCatalogIsTheConfiguredOne(t *testing.T) {
	custom := []types.InstanceType{{Name: "tiny", MilliCPU: 1000, Memory: types.GiB, MaxPods: 10, Overhead: types.Resources{MilliCPU: 100}}}
	f, _ := newTestFleet(t, func(c *Config) { c.Catalog = custom })
	got, err := f.Catalog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, custom, got)
	assert.Equal(t, "sim", f.Name())

	_, err = New(Config{Cluster: testCluster, Catalog: []types.InstanceType{{Name: "neg", MilliCPU: 100, Memory: types.GiB, MaxPods: 1, Overhead: types.Resources{MilliCPU: 200}}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"neg"`)
	_, err = New(Config{Cluster: "Bad Cluster"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.Cluster")
}
