package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

// These tests run the real connectors/kubernetes observer and drainer over
// the fleet's clientset, as `visor dev` does.

func TestObserverSeesPendingDemandAndNodeRequests(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	pool := testPool("web")
	require.NoError(t, f.AddDemand(pool, Steady(5, smallPod)))
	step(t, f, clock.Now())
	createGroup(t, f, pool, "sim-2c4g", 1, "k1")
	step(t, f, clock.Advance(45*time.Second))

	obs, err := kubernetes.NewObserver(f.Clientset(), kubernetes.Config{Cluster: testCluster, Provider: "sim", Now: clock.Now}).
		ObserveCluster(context.Background())
	require.NoError(t, err)
	p, ok := obs.Pools[pool.WorkflowID()]
	require.True(t, ok, "pool %s observed; got %v", pool.WorkflowID(), obs.Pools)
	require.Len(t, p.PendingPods, 2)
	for _, pp := range p.PendingPods {
		assert.True(t, pp.UnschedulableSince.Equal(t0), "pending since the first step, got %s", pp.UnschedulableSince)
		assert.Equal(t, "web", pp.Service)
		assert.Equal(t, int64(500), pp.Requests.MilliCPU)
	}
	require.Len(t, p.Nodes, 1)
	n := p.Nodes[0]
	assert.Equal(t, types.NodeReady, n.State)
	assert.Equal(t, int64(1500), n.Requested.MilliCPU, "three replicas; the agent DaemonSet pod is excluded")
	assert.Equal(t, int64(1800), n.Allocatable.MilliCPU)
	assert.Empty(t, obs.Unattributed)
}

func TestDrainThenDeleteNodesMovesTheWorkload(t *testing.T) {
	f, clock, pool, g := newLoadedFleet(t, "sim-4c8g", 2, 4)
	ctx := context.Background()
	victim := g.Instances[0].Name
	onVictim := podsOn(t, f, pool, victim)
	require.Positive(t, onVictim, "first fit put pods on the first node")

	res, err := kubernetes.NewDrainer(f.Clientset(), kubernetes.DrainerConfig{}).
		Drain(ctx, victim, connectors.DrainOptions{Deadline: time.Now().Add(time.Minute), EvictionRetry: 10 * time.Millisecond})
	require.NoError(t, err)
	assert.Len(t, res.Evicted, onVictim)
	assert.Equal(t, []string{agentNamespace + "/" + agentName + "-" + victim}, res.Skipped)

	require.NoError(t, f.DeleteNodes(ctx, g.ID, []string{victim}, "k2"))
	step(t, f, clock.Advance(time.Second))
	assert.NotContains(t, nodeNames(t, f), victim)
	pods := workloadPods(t, f, pool)
	require.Len(t, pods, 4, "the evicted replicas were recreated")
	for _, p := range pods {
		assert.Equal(t, g.Instances[1].Name, p.Spec.NodeName, "and run on the remaining node")
	}
}

func TestDrainHonoursDisruptionBudgetsAsReplacementsBecomeHealthy(t *testing.T) {
	// Real time: the fleet runs in the background while the drain waits.
	f, err := New(Config{Cluster: testCluster})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := testPool("web")
	require.NoError(t, f.AddDemand(pool, Steady(4, smallPod)))
	g := createGroup(t, f, pool, "sim-2c4g", 2, "k1")
	require.NoError(t, f.Step(time.Now()))
	victim := g.Instances[0].Name
	onVictim := podsOn(t, f, pool, victim)
	require.Greater(t, onVictim, 1, "the drain needs more than the one disruption allowed")

	pdbs := f.Clientset().PolicyV1().PodDisruptionBudgets(pool.Org)
	min4 := intstr.FromInt32(4)
	_, err = pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: pool.Org},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &min4, Selector: &metav1.LabelSelector{MatchLabels: workloadLabels(pool)}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, f.Step(time.Now()))
	pdb, err := pdbs.Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(0), pdb.Status.DisruptionsAllowed)
	assert.Equal(t, int32(4), pdb.Status.CurrentHealthy)

	drainer := kubernetes.NewDrainer(f.Clientset(), kubernetes.DrainerConfig{})
	opts := connectors.DrainOptions{Deadline: time.Now().Add(300 * time.Millisecond), EvictionRetry: 20 * time.Millisecond}
	_, err = drainer.Drain(ctx, victim, opts)
	require.ErrorIs(t, err, kubernetes.ErrDrainDeadline, "no disruption is allowed")
	node, err := f.Clientset().CoreV1().Nodes().Get(ctx, victim, metav1.GetOptions{})
	require.NoError(t, err)
	assert.False(t, node.Spec.Unschedulable, "the drain gave up and uncordoned")

	// Allow one disruption: each eviction waits for its replacement to
	// become Ready elsewhere before the next may go.
	pdb.Spec.MinAvailable = ptrTo(intstr.FromInt32(3))
	_, err = pdbs.Update(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)
	healthy := func() int {
		n := 0
		for _, p := range workloadPods(t, f, pool) {
			if podReady(&p) {
				n++
			}
		}
		return n
	}
	fewest := healthy()
	opts.Progress = func(connectors.DrainProgress) { fewest = min(fewest, healthy()) }
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, 10*time.Millisecond) }()
	opts.Deadline = time.Now().Add(10 * time.Second)
	res, err := drainer.Drain(ctx, victim, opts)
	require.NoError(t, err)
	assert.Len(t, res.Evicted, onVictim)
	assert.Equal(t, 3, fewest, "the budget held after every eviction")
	cancel()
	require.NoError(t, <-done)
}

func ptrTo[T any](v T) *T { return &v }
