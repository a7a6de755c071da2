package kwok

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

var pool = types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: ProviderName, Cluster: "kw1"}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestProvider(t *testing.T) (*Provider, *fake.Clientset, *clock) {
	t.Helper()
	cs := fake.NewClientset()
	c := &clock{t: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)}
	p, err := New(Config{BootDelay: types.Duration(10 * time.Second)}, cs, Options{Clock: c.now})
	require.NoError(t, err)
	return p, cs, c
}

func spec(size string, target int) connectors.NodeGroupSpec {
	labels := map[string]string{"team": "blue"}
	for k, v := range pool.NodeLabels() {
		labels[k] = v
	}
	return connectors.NodeGroupSpec{Pool: pool, Name: "visor-api-" + size, Size: size, TargetSize: target,
		Labels: labels, Taints: []types.Taint{{Key: "dedicated", Value: "api", Effect: corev1.TaintEffectNoSchedule}}}
}

func nodes(t *testing.T, cs *fake.Clientset) map[string]corev1.Node {
	t.Helper()
	list, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		out[n.Name] = n
	}
	return out
}

func states(g connectors.NodeGroup) []connectors.InstanceState {
	var out []connectors.InstanceState
	for _, in := range g.Instances {
		out = append(out, in.State)
	}
	return out
}

func TestMachinesBecomeKwokNodesAfterTheBootDelay(t *testing.T) {
	ctx := context.Background()
	p, cs, clk := newTestProvider(t)
	g, err := p.CreateNodeGroup(ctx, spec("kwok-gpu-8c32g-1xa10", 3), "pool/acme/k1")
	require.NoError(t, err)
	assert.Equal(t, 3, g.TargetSize)
	assert.Equal(t, []connectors.InstanceState{"creating", "creating", "creating"}, states(g))

	clk.t = clk.t.Add(9 * time.Second)
	require.NoError(t, p.Reconcile(ctx))
	assert.Empty(t, nodes(t, cs), "no node before the boot delay has passed")

	clk.t = clk.t.Add(time.Second)
	require.NoError(t, p.Reconcile(ctx))
	got := nodes(t, cs)
	require.Len(t, got, 3)
	zones := map[string]int{}
	for _, in := range g.Instances {
		n, ok := got[in.Name]
		require.True(t, ok, "instance %s has no node", in.Name)
		assert.Equal(t, "fake", n.Annotations[AnnotationKwokNode])
		assert.Equal(t, "kwok", n.Labels["type"])
		assert.Equal(t, in.Name, n.Labels[corev1.LabelHostname])
		assert.Equal(t, "kwok-gpu-8c32g-1xa10", n.Labels[corev1.LabelInstanceTypeStable])
		assert.Equal(t, "NVIDIA-A10", n.Labels["nvidia.com/gpu.product"])
		assert.Equal(t, "blue", n.Labels["team"])
		assert.Equal(t, pool.NodePoolLabel(), n.Labels[types.LabelPool])
		zones[n.Labels[corev1.LabelTopologyZone]]++
		assert.Equal(t, []corev1.Taint{{Key: "dedicated", Value: "api", Effect: corev1.TaintEffectNoSchedule}}, n.Spec.Taints)
		alloc := n.Status.Allocatable
		assert.Equal(t, "7800m", ptr(alloc[corev1.ResourceCPU]).String())
		assert.Equal(t, "1", ptr(alloc[types.ResourceGPU]).String())
		assert.Equal(t, "109", ptr(alloc[corev1.ResourcePods]).String())
		assert.False(t, ptr(alloc[corev1.ResourceEphemeralStorage]).IsZero())
		assert.Equal(t, "8", ptr(n.Status.Capacity[corev1.ResourceCPU]).String())
	}
	assert.Equal(t, map[string]int{"kwok-a": 1, "kwok-b": 1, "kwok-c": 1}, zones, "machines are spread over the size's zones")

	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, []connectors.InstanceState{"running", "running", "running"}, states(groups[0]))
}

func ptr(q resource.Quantity) *resource.Quantity { return &q }

// A repeat with the same key is the conformance suite's; a key reused for
// another request is refused.
func TestAKeyReusedForAnotherRequestIsRefused(t *testing.T) {
	ctx := context.Background()
	p, _, _ := newTestProvider(t)
	_, err := p.CreateNodeGroup(ctx, spec("kwok-4c8g", 2), "k1")
	require.NoError(t, err)

	_, err = p.CreateNodeGroup(ctx, spec("kwok-8c32g", 2), "k1")
	require.Error(t, err)
	assert.Equal(t, errclass.Permanent, errclass.Of(err))
	assert.Contains(t, err.Error(), "another request")

	other := pool
	other.Service = "batch"
	groups, err := p.NodeGroups(ctx, other)
	require.NoError(t, err)
	assert.Empty(t, groups, "another pool sees none of this pool's groups")
}

func TestTargetAndDeletion(t *testing.T) {
	ctx := context.Background()
	p, cs, clk := newTestProvider(t)
	g, err := p.CreateNodeGroup(ctx, spec("kwok-2c4g", 2), "k1")
	require.NoError(t, err)
	require.NoError(t, p.SetTargetSize(ctx, g.ID, 4, "k2"))
	require.NoError(t, p.SetTargetSize(ctx, g.ID, 4, "k2"), "an absolute target repeats as a no-op")
	clk.t = clk.t.Add(time.Minute)
	require.NoError(t, p.Reconcile(ctx))
	require.Len(t, nodes(t, cs), 4)

	require.NoError(t, p.SetTargetSize(ctx, g.ID, 3, "k3"))
	got := nodes(t, cs)
	assert.Len(t, got, 3)
	assert.NotContains(t, got, g.ID+"-3", "lowering the target removes the newest machine")

	require.NoError(t, p.DeleteNodes(ctx, g.ID, []string{g.ID + "-0"}, "k4"))
	require.NoError(t, p.DeleteNodes(ctx, g.ID, []string{g.ID + "-0"}, "k4"), "a node already gone is success")
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 2, groups[0].TargetSize, "deleting a node lowers the target")
	assert.NotContains(t, nodes(t, cs), g.ID+"-0")
	clk.t = clk.t.Add(time.Minute)
	require.NoError(t, p.Reconcile(ctx))
	assert.Len(t, nodes(t, cs), 2, "a deleted machine's node never comes back")

	h, err := p.CreateNodeGroup(ctx, spec("kwok-4c8g", 1), "k5")
	require.NoError(t, err)
	clk.t = clk.t.Add(time.Minute)
	require.NoError(t, p.Reconcile(ctx))
	err = p.DeleteNodes(ctx, g.ID, []string{h.ID + "-0"}, "k6")
	require.Error(t, err, "a node of another group is refused")
	assert.Equal(t, errclass.Permanent, errclass.Of(err))
	assert.Contains(t, nodes(t, cs), h.ID+"-0")

	err = p.SetTargetSize(ctx, "kwok-nosuchgroup", 1, "k7")
	assert.Equal(t, errclass.NotFound, errclass.Of(err))

	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, "k8"))
	left := nodes(t, cs)
	assert.Len(t, left, 1)
	assert.Contains(t, left, h.ID+"-0")
}

func TestReconcileDeletesNodesNoMachineOwns(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := newTestProvider(t)
	orphan := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-gone-0", Labels: map[string]string{LabelGroup: "kwok-gone"}}}
	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"}}
	for _, n := range []*corev1.Node{orphan, foreign} {
		_, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, p.Reconcile(ctx))
	got := nodes(t, cs)
	assert.NotContains(t, got, "kwok-gone-0")
	assert.Contains(t, got, "someone-elses", "a node without the provider's group label is never touched")
}

func TestBadRequestsAreRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := newTestProvider(t)
	_, err := p.CreateNodeGroup(ctx, spec("m5.large", 1), "k1")
	require.Error(t, err)
	assert.Equal(t, errclass.Permanent, errclass.Of(err))
	assert.Contains(t, err.Error(), `spec.size "m5.large"`)

	// Labels and taints are every provider's to get right: Checked, which
	// every worker calls through, refuses them.
	bad := spec("kwok-2c4g", 1)
	bad.Taints = []types.Taint{{Key: "x", Effect: "Sometimes"}}
	_, err = connectors.Checked(p).CreateNodeGroup(ctx, bad, "k2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.taints[0].effect")
	cms, err := cs.CoreV1().ConfigMaps(DefaultNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, cms.Items, "a refused create records nothing")
}

func TestConfigProblemsNameTheField(t *testing.T) {
	cfg := Config{BootDelay: types.Duration(-time.Second), Namespace: "Not_A_Namespace",
		Catalog: []types.InstanceType{{Name: "a", MilliCPU: 1000, Memory: types.GiB, MaxPods: 10, Zones: []string{"bad zone"}}, {Name: "a"}}}
	joined := connectors.ConfigError(&cfg).Error()
	for _, want := range []string{"bootDelay: must not be negative", `namespace: "Not_A_Namespace"`, `catalog[0].zones: "bad zone"`, `catalog[1].name: "a" is listed twice`, "catalog[1]: size \"a\""} {
		assert.Contains(t, joined, want)
	}
	_, err := New(cfg, fake.NewClientset(), Options{})
	assert.ErrorContains(t, err, "bootDelay")
}

func TestCatalogIsAFreshCopy(t *testing.T) {
	p, _, _ := newTestProvider(t)
	a, err := p.Catalog(context.Background())
	require.NoError(t, err)
	a[0].Zones[0] = "mutated"
	b, err := p.Catalog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "kwok-a", b[0].Zones[0])
	assert.Equal(t, "kwok-a", Zones[0])
}

// zonesOf is the pool's machines by zone, as their nodes say.
func zonesOf(t *testing.T, cs *fake.Clientset) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, n := range nodes(t, cs) {
		out[n.Labels[corev1.LabelTopologyZone]]++
	}
	return out
}

// A new group balances the pool's zones, not only its own: with a node in
// kwok-a, the next two go to kwok-b and kwok-c, as the planner's zone
// spread expects of a zone-balanced pool. A group whose labels name a zone
// keeps every machine there.
func TestZonesBalanceOverThePoolAndALabelPinsThem(t *testing.T) {
	ctx := context.Background()
	p, cs, clk := newTestProvider(t)
	_, err := p.CreateNodeGroup(ctx, spec("kwok-2c4g", 1), "k1")
	require.NoError(t, err)
	g, err := p.CreateNodeGroup(ctx, spec("kwok-4c8g", 1), "k2")
	require.NoError(t, err)
	require.NoError(t, p.SetTargetSize(ctx, g.ID, 2, "k3"))
	clk.t = clk.t.Add(10 * time.Second)
	require.NoError(t, p.Reconcile(ctx))
	assert.Equal(t, map[string]int{"kwok-a": 1, "kwok-b": 1, "kwok-c": 1}, zonesOf(t, cs))

	pinned := spec("kwok-8c32g", 3)
	pinned.Labels[corev1.LabelTopologyZone] = "kwok-c"
	_, err = p.CreateNodeGroup(ctx, pinned, "k4")
	require.NoError(t, err)
	clk.t = clk.t.Add(10 * time.Second)
	require.NoError(t, p.Reconcile(ctx))
	assert.Equal(t, map[string]int{"kwok-a": 1, "kwok-b": 1, "kwok-c": 4}, zonesOf(t, cs))
}

func TestNodesCarryTheConfiguredRegion(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	clk := &clock{t: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)}
	p, err := New(Config{BootDelay: types.Duration(time.Second), Region: "eu-test-1"}, cs, Options{Clock: clk.now})
	require.NoError(t, err)
	_, err = p.CreateNodeGroup(ctx, spec("kwok-2c4g", 1), "k1")
	require.NoError(t, err)
	clk.t = clk.t.Add(time.Second)
	require.NoError(t, p.Reconcile(ctx))
	for _, n := range nodes(t, cs) {
		assert.Equal(t, "eu-test-1", n.Labels[corev1.LabelTopologyRegion])
	}
	_, err = New(Config{Region: "not a label!"}, cs, Options{})
	require.ErrorContains(t, err, "region")
}

// NodeGroupSpec.Zone alone pins the group: every machine's node is
// labelled with that zone, growing keeps it there, and the group reads
// back with its zone (so the planner finds it again for that offering).
// A zone the size is not offered in, or one its labels contradict, is
// refused naming spec.zone, and nothing is recorded.
func TestSpecZonePinsTheGroupsNodes(t *testing.T) {
	ctx := context.Background()
	p, cs, clk := newTestProvider(t)
	s := spec("kwok-4c8g", 2)
	s.Zone = "kwok-b"
	g, err := p.CreateNodeGroup(ctx, s, "k1")
	require.NoError(t, err)
	assert.Equal(t, "kwok-b", g.Zone)
	require.NoError(t, p.SetTargetSize(ctx, g.ID, 3, "k2"))
	clk.t = clk.t.Add(10 * time.Second)
	require.NoError(t, p.Reconcile(ctx))
	assert.Equal(t, map[string]int{"kwok-b": 3}, zonesOf(t, cs))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, "kwok-b", groups[0].Zone)

	for name, bad := range map[string]func(*connectors.NodeGroupSpec){
		"a zone the size is not offered in": func(s *connectors.NodeGroupSpec) { s.Zone = "us-east-1a" },
		"labels naming another zone": func(s *connectors.NodeGroupSpec) {
			s.Zone = "kwok-a"
			s.Labels[corev1.LabelTopologyZone] = "kwok-c"
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec("kwok-2c4g", 1)
			bad(&s)
			_, err := p.CreateNodeGroup(ctx, s, connectors.IdempotencyKey("bad/"+name))
			require.Error(t, err)
			assert.Equal(t, errclass.Permanent, errclass.Of(err))
			assert.Contains(t, err.Error(), "spec.zone")
			groups, err := p.NodeGroups(ctx, pool)
			require.NoError(t, err)
			assert.Len(t, groups, 1, "a refused create records nothing")
		})
	}
}

// The labels this provider puts on each node naming its machine and
// group are ones the law passes over when it compares two nodes'
// templates; were they not, no replacement on kwok could ever drain.
func TestMachineLabelsAreKnownToTheLaw(t *testing.T) {
	for _, l := range []string{LabelGroup, LabelMachine} {
		assert.Contains(t, law.MachineLabels, l)
	}
}
