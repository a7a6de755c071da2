package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

func createSpotGroup(t *testing.T, f *Fleet, pool types.PoolKey, size string, target int, key string) connectors.NodeGroup {
	t.Helper()
	g, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: pool, Size: size, TargetSize: target, CapacityType: types.CapacitySpot}, connectors.IdempotencyKey(key))
	require.NoError(t, err)
	return g
}

// spotRun steps a spot group for two hours at a rate of two interruptions
// per machine-hour and returns the notices sent.
func spotRun(t *testing.T, seed int64) ([]connectors.Interruption, Inventory) {
	f, clock := newTestFleet(t, func(c *Config) {
		c.Seed = seed
		c.Faults = FaultConfig{SpotInterruptionRate: 2}
	})
	pool := testPool("spot")
	createSpotGroup(t, f, pool, "sim-2c4g", 3, "k1")
	for range 240 {
		require.NoError(t, f.Step(clock.Advance(30*time.Second)))
	}
	return f.Notices(), f.Inventory()
}

func TestSpotMachinesAreWarnedTwoMinutesAheadThenTakenBack(t *testing.T) {
	notices, inv := spotRun(t, 7)
	// 3 machines × 2 h × 2/h ≈ 12; a seeded run is exact, but the number
	// only has to be plausible for the model.
	require.GreaterOrEqual(t, len(notices), 4, "notices at 2 per machine-hour over 6 machine-hours")
	require.LessOrEqual(t, len(notices), 30)
	ended := map[string]time.Time{}
	for _, e := range inv.Ended {
		ended[e.Instance.ID] = e.Instance.EndedAt
	}
	for _, n := range notices {
		require.Equal(t, connectors.InterruptionSpot, n.Kind)
		require.Equal(t, 2*time.Minute, n.Deadline.Sub(n.NoticeAt), "EC2's two-minute notice")
		if n.Deadline.After(t0.Add(2*time.Hour - time.Minute)) {
			continue // not yet due when the run ended
		}
		at, ok := ended[n.InstanceID]
		require.True(t, ok, "machine %s warned at %s is not in Ended", n.InstanceID, n.NoticeAt)
		require.False(t, at.Before(n.Deadline), "machine %s ended at %s, before its deadline %s", n.InstanceID, at, n.Deadline)
		require.Less(t, at.Sub(n.Deadline), time.Minute, "taken back at the first step past the deadline")
	}
	require.Len(t, inv.Groups, 1)
	require.Len(t, inv.Groups[0].Group.Instances, 3, "the group keeps its target and replaces what was taken back")

	again, _ := spotRun(t, 7)
	require.Equal(t, notices, again, "the same seed sends the same notices")
	other, _ := spotRun(t, 8)
	require.NotEqual(t, notices, other, "another seed draws other times")
}

func TestInterruptionsListThePoolsNoticesUntilAcknowledged(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	ctx := context.Background()
	pool, other := testPool("spot"), testPool("other")
	g := createSpotGroup(t, f, pool, "sim-2c4g", 1, "k1")
	od := createGroup(t, f, other, "sim-2c4g", 1, "k2")
	require.NoError(t, f.Step(clock.Advance(time.Second)))

	_, err := f.Interrupt(od.Instances[0].ID)
	require.ErrorContains(t, err, "only spot machines are interrupted")
	n, err := f.Interrupt(g.Instances[0].Name)
	require.NoError(t, err)
	require.Equal(t, g.Instances[0].ID, n.InstanceID)
	again, err := f.Interrupt(g.Instances[0].ID)
	require.NoError(t, err)
	require.Equal(t, n, again, "a machine already warned keeps its notice")

	got, err := f.Interruptions(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, []connectors.Interruption{n}, got)
	none, err := f.Interruptions(ctx, other)
	require.NoError(t, err)
	require.Empty(t, none, "another pool's notices are not listed")

	// Past the deadline the machine is gone, the notice still unread.
	require.NoError(t, f.Step(clock.Advance(2*time.Minute)))
	got, err = f.Interruptions(ctx, pool)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.NoError(t, f.Acknowledge(ctx, pool, []string{n.ID, "unknown"}))
	require.NoError(t, f.Acknowledge(ctx, pool, []string{n.ID}), "twice is success")
	got, err = f.Interruptions(ctx, pool)
	require.NoError(t, err)
	require.Empty(t, got)

	// Through Checked, as a worker holds it, the fleet still tells.
	src, ok := connectors.Checked(f).(connectors.InterruptionSource)
	require.True(t, ok, "Checked keeps InterruptionSource")
	_, ok = connectors.Checked(f).(connectors.LeakFinder)
	require.True(t, ok, "and LeakFinder")
	err = src.Acknowledge(ctx, pool, []string{""})
	require.True(t, errclass.IsPermanent(err), "an empty notice ID is refused: %v", err)
}

func TestNoticesSurviveARestart(t *testing.T) {
	path := t.TempDir() + "/state.json"
	f, clock := newTestFleet(t, func(c *Config) { c.StatePath = path })
	g := createSpotGroup(t, f, testPool("spot"), "sim-2c4g", 1, "k1")
	require.NoError(t, f.Step(clock.Advance(time.Second)))
	n, err := f.Interrupt(g.Instances[0].ID)
	require.NoError(t, err)
	require.NoError(t, f.Save())
	g2, err := New(Config{Cluster: testCluster, Clock: clock.Now, StatePath: path, Catalog: catalogs.SimSpot()})
	require.NoError(t, err)
	require.Equal(t, []connectors.Interruption{n}, g2.Notices())
	require.NoError(t, g2.Step(clock.Advance(2*time.Minute)))
	inv := g2.Inventory()
	require.Len(t, inv.Ended, 1, "the warned machine is taken back after a restart too")
	require.Equal(t, g.Instances[0].ID, inv.Ended[0].Instance.ID)
}

func TestAnExhaustedOfferingRefusesOnlyThatCapacityType(t *testing.T) {
	f, _ := newTestFleet(t, func(c *Config) {
		c.Faults = FaultConfig{SoldOutOfferings: []string{"sim-2c4g//spot"}}
	})
	ctx := context.Background()
	pool := testPool("spot")
	_, err := f.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g", TargetSize: 1, CapacityType: types.CapacitySpot}, "k1")
	require.True(t, errclass.IsInsufficientCapacity(err), "spot refused: %v", err)
	require.ErrorContains(t, err, "sim-2c4g//spot")
	od := createGroup(t, f, pool, "sim-2c4g", 1, "k2")
	require.Len(t, od.Instances, 1, "on-demand of the same size still launches")

	// A spot group made before the exhaustion cannot grow.
	require.NoError(t, f.SetFaults(FaultConfig{}))
	g := createSpotGroup(t, f, pool, "sim-4c8g", 1, "k3")
	require.NoError(t, f.SetFaults(FaultConfig{SoldOutOfferings: []string{"sim-4c8g//spot"}}))
	err = f.SetTargetSize(ctx, g.ID, 2, "k4")
	require.True(t, errclass.IsInsufficientCapacity(err), "%v", err)

	for bad, want := range map[string]string{"sim-2c4g": "want size/zone/capacity-type", "sim-2c4g//cheap": "want size/zone/capacity-type", "huge//spot": "not in the catalog"} {
		err := f.SetFaults(FaultConfig{SoldOutOfferings: []string{bad}})
		require.Error(t, err, bad)
		require.True(t, strings.Contains(err.Error(), want) && strings.Contains(err.Error(), "SoldOutOfferings"), "%s: %v", bad, err)
	}
	require.ErrorContains(t, f.SetFaults(FaultConfig{SpotInterruptionRate: -1}), "SpotInterruptionRate")
}

func TestAGroupLabelledSpotIsBoughtAsSpot(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	g, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: testPool("spot"), Size: "sim-2c4g", TargetSize: 1,
		Labels: map[string]string{types.CapacityTypeLabel: "spot"}}, "k1")
	require.NoError(t, err)
	require.Equal(t, types.CapacitySpot, g.CapacityType)
	od, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: testPool("spot"), Size: "sim-2c4g", TargetSize: 1,
		CapacityType: types.CapacityOnDemand, Labels: map[string]string{types.CapacityTypeLabel: "spot"}}, "k2")
	require.NoError(t, err)
	require.Equal(t, types.CapacityOnDemand, od.CapacityType, "the spec's own capacity type wins")
}

func TestInventoryRecordsNoticesAndCapacityRefusals(t *testing.T) {
	f, clock := newTestFleet(t, func(c *Config) {
		c.Faults = FaultConfig{SoldOutOfferings: []string{"sim-2c4g//spot"}}
	})
	pool := testPool("spot")
	_, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g", TargetSize: 1, CapacityType: types.CapacitySpot}, "k1")
	require.Error(t, err)
	g := createSpotGroup(t, f, pool, "sim-4c8g", 1, "k2")
	require.NoError(t, f.Step(clock.Advance(time.Second)))
	n, err := f.Interrupt(g.Instances[0].ID)
	require.NoError(t, err)
	inv := f.Inventory()
	require.Equal(t, []CapacityRefusal{{Pool: pool, Size: "sim-2c4g", CapacityType: types.CapacitySpot, At: t0}}, inv.Refusals)
	require.Equal(t, "sim-2c4g//spot", inv.Refusals[0].Offering())
	require.Equal(t, []PoolNotice{{Pool: pool, Notice: n}}, inv.Notices)
}
