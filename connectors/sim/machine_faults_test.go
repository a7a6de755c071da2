package sim

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func nodeByName(t *testing.T, f *Fleet, name string) *corev1.Node {
	t.Helper()
	for _, n := range listNodes(t, f) {
		if n.Name == name {
			return &n
		}
	}
	return nil
}

func onlyGroup(t *testing.T, f *Fleet) connectors.NodeGroup {
	t.Helper()
	groups, err := f.NodeGroups(context.Background(), testPool("web"))
	require.NoError(t, err)
	require.Len(t, groups, 1)
	return groups[0]
}

func TestNeverJoinsMachineRunsButItsNodeNeverRegisters(t *testing.T) {
	f, clock := newTestFleet(t, func(cfg *Config) { cfg.ProvisionDelay = time.Minute })
	require.NoError(t, f.ForceFault(NeverJoins, 1))
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 2, "k1")
	lost := g.Instances[0]
	for range 5 {
		step(t, f, clock.Advance(time.Minute))
	}
	assert.Nil(t, nodeByName(t, f, lost.Name), "the machine never registered")
	assert.NotNil(t, nodeByName(t, f, g.Instances[1].Name), "only the forced launch is affected")
	g = onlyGroup(t, f)
	assert.Equal(t, 2, g.TargetSize)
	assert.Equal(t, connectors.InstanceCreating, g.Instances[0].State, "the provider still counts it as booting")
	assert.Equal(t, t0, g.Instances[0].CreatedAt, "CreatedAt says how long it has been booting")

	// The registration timeout deletes it by ID: it has no node name to go by.
	require.NoError(t, f.DeleteNodes(context.Background(), g.ID, []string{lost.ID}, "timeout-1"))
	g = onlyGroup(t, f)
	assert.Equal(t, 1, g.TargetSize, "deleted without replacement")
	require.Len(t, g.Instances, 1)
	assert.NotEqual(t, lost.ID, g.Instances[0].ID)
}

func TestGoesNotReadyNodeStaysNotReadyWhileItsMachineRuns(t *testing.T) {
	f, clock := newTestFleet(t, func(cfg *Config) {
		cfg.Faults.FaultAfter = 2 * time.Minute
	})
	require.NoError(t, f.ForceFault(GoesNotReady, 1))
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 1, "k1")
	name := g.Instances[0].Name
	step(t, f, clock.Now())
	require.True(t, nodeReady(nodeByName(t, f, name)), "it turns Ready first")
	step(t, f, clock.Advance(time.Minute))
	require.True(t, nodeReady(nodeByName(t, f, name)), "before FaultAfter it is fine")

	step(t, f, clock.Advance(time.Minute))
	for range 3 { // and it stays NotReady: nothing heals it
		n := nodeByName(t, f, name)
		require.NotNil(t, n)
		assert.False(t, nodeReady(n))
		assert.Contains(t, n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule})
		step(t, f, clock.Advance(time.Minute))
	}
	assert.Equal(t, connectors.InstanceRunning, onlyGroup(t, f).Instances[0].State, "the provider still reports it running")
}

func TestTerminatedOutOfBandMachineIsReplacedByItsGroup(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	require.NoError(t, f.ForceFault(TerminatedOutOfBand, 1))
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 2, "k1")
	doomed := g.Instances[0]
	step(t, f, clock.Now())                // both boot
	step(t, f, clock.Advance(time.Second)) // FaultAfter 0: the doomed one vanishes
	require.Len(t, onlyGroup(t, f).Instances, 1)
	step(t, f, clock.Advance(time.Second)) // its group notices
	after := onlyGroup(t, f)
	assert.Equal(t, 2, after.TargetSize, "the group keeps its target")
	require.Len(t, after.Instances, 2, "and launched a replacement")
	for _, inst := range after.Instances {
		assert.NotEqual(t, doomed.ID, inst.ID)
	}
	assert.Nil(t, nodeByName(t, f, doomed.Name), "its node went with it")
	assert.Len(t, listNodes(t, f), 2)

	// Someone deletes a machine by hand: the same.
	require.NoError(t, f.TerminateOutOfBand(after.Instances[1].ID))
	assert.Len(t, onlyGroup(t, f).Instances, 1)
	step(t, f, clock.Advance(time.Second))
	assert.Len(t, onlyGroup(t, f).Instances, 2)
	require.Error(t, f.TerminateOutOfBand("i-nope"))
}

func TestLeakedMachineIsInNoGroupAndCollectable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	f, clock := newTestFleet(t, func(cfg *Config) { cfg.StatePath = path })
	ctx := context.Background()
	pool := testPool("web")
	require.NoError(t, f.ForceFault(Leaked, 1))
	g := createGroup(t, f, pool, "sim-2c4g", 2, "k1")
	step(t, f, clock.Now())

	leaks, err := f.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	require.Len(t, leaks, 1)
	for _, inst := range g.Instances {
		assert.NotEqual(t, inst.ID, leaks[0].ID, "the leak is no group's member")
	}
	assert.Len(t, onlyGroup(t, f).Instances, 2)
	assert.Len(t, listNodes(t, f), 2, "a leaked machine never joins")
	other, err := f.LeakedInstances(ctx, testPool("api"))
	require.NoError(t, err)
	assert.Empty(t, other, "leaks are per pool")

	// It survives a restart: the leak is at the provider, not in memory.
	require.NoError(t, f.Save())
	f, _ = newTestFleet(t, func(cfg *Config) { cfg.StatePath = path })
	inv := f.Inventory()
	require.Len(t, inv.Groups, 1)
	assert.Equal(t, pool, inv.Groups[0].Pool)
	require.Len(t, inv.Leaked, 1)
	assert.Equal(t, pool, inv.Leaked[0].Pool)
	assert.Equal(t, "sim-2c4g", inv.Leaked[0].Size)
	leaks, err = f.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	require.Len(t, leaks, 1)

	// A group member is refused and nothing changes.
	err = f.DeleteInstances(ctx, pool, []string{leaks[0].ID, g.Instances[0].ID}, "gc-1")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Equal(t, 1, f.LeakedMachines())

	require.NoError(t, f.DeleteInstances(ctx, pool, []string{leaks[0].ID}, "gc-2"))
	assert.Equal(t, 0, f.LeakedMachines())
	require.NoError(t, f.DeleteInstances(ctx, pool, []string{leaks[0].ID}, "gc-2"), "a retry is success")
	require.NoError(t, f.DeleteInstances(ctx, pool, []string{leaks[0].ID}, "gc-3"), "already gone is success")
	assert.Len(t, onlyGroup(t, f).Instances, 2)
}

func TestMachineFaultRatesAreSeededAndRoughlyAsConfigured(t *testing.T) {
	faults := FaultConfig{NeverJoinsRate: 0.2, GoesNotReadyRate: 0.2, TerminatedRate: 0.1, LeakRate: 0.1}
	fates := func() (map[MachineFault]int, int) {
		f, _ := newTestFleet(t, func(cfg *Config) { cfg.Faults = faults; cfg.Seed = 9 })
		createGroup(t, f, testPool("web"), "sim-2c4g", 200, "k1")
		seen := map[MachineFault]int{}
		for _, g := range f.st.Groups {
			for _, m := range g.Machines {
				seen[m.Fault]++
			}
		}
		return seen, f.LeakedMachines()
	}
	a, leaksA := fates()
	b, leaksB := fates()
	t.Logf("fates of 200 launches (seed 9): %v, leaked %d", a, leaksA)
	assert.Equal(t, a, b, "the same seed, the same fates")
	assert.Equal(t, leaksA, leaksB)
	assert.InDelta(t, 40, a[NeverJoins], 15)
	assert.InDelta(t, 40, a[GoesNotReady], 15)
	assert.InDelta(t, 20, a[TerminatedOutOfBand], 12)
	assert.InDelta(t, 20, leaksA, 12)
	assert.Equal(t, 200, a[NeverJoins]+a[GoesNotReady]+a[TerminatedOutOfBand]+a[""])
}

func TestDeleteNodeGroupTerminatesEverythingAndARepeatIsSuccess(t *testing.T) {
	f, clock := newTestFleet(t, func(cfg *Config) { cfg.Faults.CreateSucceedsButErrorsRate = 1 })
	ctx := context.Background()
	pool := testPool("web")
	require.NoError(t, f.SetFaults(FaultConfig{}))
	g := createGroup(t, f, pool, "sim-2c4g", 3, "k1")
	keep := createGroup(t, f, testPool("api"), "sim-2c4g", 1, "k2")
	step(t, f, clock.Now())
	require.NoError(t, f.SetFaults(FaultConfig{CreateSucceedsButErrorsRate: 1}))

	err := f.DeleteNodeGroup(ctx, g.ID, "dereg/"+connectors.IdempotencyKey(g.ID))
	require.Error(t, err, "the answer is lost")
	require.NoError(t, f.SetFaults(FaultConfig{}))
	groups, err := f.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, groups, "but the group is gone")
	assert.Equal(t, []string{keep.Instances[0].Name}, nodeNames(t, f), "with its nodes; the other pool's stay")
	require.NoError(t, f.DeleteNodeGroup(ctx, g.ID, "dereg/"+connectors.IdempotencyKey(g.ID)), "the retry is success")
	step(t, f, clock.Advance(time.Second))
	assert.Len(t, listNodes(t, f), 1, "nothing comes back")
	assert.True(t, errclass.IsPermanent(connectors.Checked(f).DeleteNodeGroup(ctx, g.ID, "")), "a key is required, as Checked sees to")
}

func TestDeleteNodesByIDAndNameOfOneMachineDeletesOne(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 3, "k1")
	m := g.Instances[1]
	require.NoError(t, f.DeleteNodes(context.Background(), g.ID, []string{m.ID, m.Name}, "d1"))
	after := onlyGroup(t, f)
	assert.Equal(t, 2, after.TargetSize)
	assert.Len(t, after.Instances, 2)
}

func TestCallLatencyDelaysCallsAndIsBoundedByTheContext(t *testing.T) {
	f, _ := newTestFleet(t, func(cfg *Config) { cfg.Faults.CallLatency = 60 * time.Millisecond })
	start := time.Now()
	_, err := f.Catalog(context.Background())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond)

	// A caller that gives up mid-call is answered when its context ends.
	require.NoError(t, f.SetFaults(FaultConfig{CallLatency: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = f.NodeGroups(ctx, testPool("web"))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestChangeAppliedBeforeTheLatencyAfterItSurvivesACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	const latency = 2 * time.Second
	f, _ := newTestFleet(t, func(cfg *Config) {
		cfg.StatePath = path
		cfg.Faults.CallLatency = latency
	})
	done := make(chan error, 1)
	go func() {
		_, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-2c4g", TargetSize: 2}, "k1")
		done <- err
	}()
	// The worker dies while the answer is on its way: a new process starts
	// from what is on disk. It starts from a copy, as a restart after a
	// crash would find it, so its start-up cleanup cannot race the live
	// fleet's next save.
	crashed := filepath.Join(t.TempDir(), "fleet.json")
	require.Eventually(t, func() bool {
		saved, err := os.ReadFile(path)
		if err != nil || os.WriteFile(crashed, saved, 0o600) != nil {
			return false
		}
		restarted, err := New(Config{Cluster: testCluster, StatePath: crashed})
		if err != nil {
			return false
		}
		groups, err := restarted.NodeGroups(context.Background(), testPool("web"))
		return err == nil && len(groups) == 1
	}, latency-200*time.Millisecond, 20*time.Millisecond, "the group is on disk before the call answers")
	select {
	case err := <-done:
		t.Fatalf("the call answered before its latency was over: %v", err)
	default:
	}
	require.NoError(t, <-done)
}

func TestNewFaultSettingsAreValidatedByName(t *testing.T) {
	cases := map[string]FaultConfig{
		"faults.NeverJoinsRate":    {NeverJoinsRate: 1.5},
		"faults.LeakRate":          {LeakRate: -0.1},
		"must not exceed 1":        {NeverJoinsRate: 0.5, GoesNotReadyRate: 0.4, TerminatedRate: 0.2},
		"faults.FaultAfter":        {FaultAfter: -time.Second},
		"faults.CallLatency:":      {CallLatency: -time.Second},
		"faults.CallLatencyJitter": {CallLatencyJitter: -time.Second},
	}
	for want, faults := range cases {
		_, err := New(Config{Cluster: testCluster, Faults: faults})
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
	f, _ := newTestFleet(t, nil)
	assert.Error(t, f.ForceFault("melts", 1))
	assert.Error(t, f.ForceFault(Leaked, -1))
}

func TestGroupDeletedOutOfBandIsGoneWithItsNodes(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 2, "k1")
	step(t, f, clock.Now())
	require.NoError(t, f.DeleteGroupOutOfBand(g.ID))
	step(t, f, clock.Advance(time.Second))
	groups, err := f.NodeGroups(context.Background(), testPool("web"))
	require.NoError(t, err)
	assert.Empty(t, groups, "the next reconcile sees no group")
	assert.Empty(t, listNodes(t, f))
	assert.Empty(t, f.Inventory().Groups)
	require.Error(t, f.DeleteGroupOutOfBand(g.ID))
	err = f.SetTargetSize(context.Background(), g.ID, 1, "k2")
	assert.True(t, errclass.IsNotFound(err), "acting on the vanished group is NotFound: %v", err)
}
