package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// Capacity policies on the pool's own timers, in workflow time.

func berlin(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	return loc
}

func TestWeekdayWindowPrescalesBefore8AndReleasesAfter(t *testing.T) {
	p := types.DefaultPolicy()
	p.ProvisioningDelay = types.Duration(5 * time.Minute)
	p.CapacityWindows = []types.CapacityWindow{{Name: "office", Schedule: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: types.Duration(11 * time.Hour), MinNodes: 5}}
	env, w := newTestPool(t, p, busyNodes())
	// Monday 1 March 2027, 07:00 in Berlin.
	start := time.Date(2027, 3, 1, 7, 0, 0, 0, berlin(t))
	env.SetStartTime(start)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.provisions, "grew before the window's provisioning delay")
	}, 54*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "did not pre-scale one provisioning delay before 08:00")
		require.Equal(t, 5, w.provisions[0].Target)
		// The nodes came up and stay idle all day.
		w.mu.Lock()
		for _, name := range []string{"n3", "n4", "n5"} {
			w.nodes = append(w.nodes, node(name, 0.05, 0.05))
		}
		w.mu.Unlock()
		w.signal()
	}, 56*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.deleted, "removed nodes the window's floor keeps")
		st := status(t, env)
		require.Contains(t, st.Capacity, "office")
	}, 11*time.Hour+50*time.Minute) // 18:50
	env.RegisterDelayedCallback(func() {
		require.NotEmpty(t, w.deleted, "kept the window's nodes after it closed at 19:00")
	}, 12*time.Hour+40*time.Minute) // 19:40
	finish(env, 12*time.Hour+45*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestHeadroomBuysRoomBeforeAnyPodWaits(t *testing.T) {
	p := types.DefaultPolicy()
	p.Headroom = []types.Headroom{{Name: "burst", Pods: 2, Requests: types.Resources{MilliCPU: 1500, Memory: 2 * types.GiB}}}
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "no room bought for the headroom")
		st := status(t, env)
		require.Equal(t, 0, st.PendingPods, "headroom pods are not pending pods")
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		// The node came up with the room: nothing more is bought.
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n3", 0, 0))
		w.mu.Unlock()
		w.signal()
	}, time.Minute)
	finish(env, 30*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1, "bought again although the headroom's room is there")
	require.NotContains(t, w.deleted[:len(w.deleted)-3], "n3", "scale-down took the headroom's node")
}

func TestDisruptionWindowHoldsScaleDownUntilItOpens(t *testing.T) {
	p := types.DefaultPolicy()
	p.Disruption = &types.DisruptionBudget{Windows: []types.DisruptionWindow{{Name: "night", Schedule: "0 2 * * *", TimeZone: "Europe/Berlin", Duration: types.Duration(2 * time.Hour), ScaleDown: types.ScaleDownAllowed}}}
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.05, 0.05)}
	env, w := newTestPool(t, p, nodes)
	env.SetStartTime(time.Date(2027, 3, 1, 12, 0, 0, 0, berlin(t)))
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.deleted, "scaled down outside the night window")
		st := status(t, env)
		require.Contains(t, st.Blocked[0], "scale-down not allowed now")
	}, 13*time.Hour+50*time.Minute) // 01:50
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"n3"}, w.deleted, "idle node not removed once the window opened at 02:00")
	}, 14*time.Hour+20*time.Minute) // 02:20
	finish(env, 14*time.Hour+30*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestManualTargetHeldAsTheFloor(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateScale, "hold", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("held scale refused: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.ScaleRequest{Target: 4, Reason: "launch", Hold: types.Duration(time.Hour)})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n3", 0, 0), node("n4", 0, 0))
		w.mu.Unlock()
		w.signal()
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.deleted, "removed held nodes during the hold")
		st := status(t, env)
		require.Equal(t, 4, st.HoldTarget)
		require.Contains(t, st.Decisions[0].Reason, "held as the floor until")
	}, 55*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.NotEmpty(t, w.deleted, "the law did not take over when the hold ended")
	}, 90*time.Minute)
	finish(env, 95*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestOrgCeilingHoldsAcrossTheOrgsPools(t *testing.T) {
	p := types.DefaultPolicy()
	p.OrgLimits = &types.OrgPolicy{Org: "acme", MaxNodes: 5}
	p.ScaleUpCooldown = types.Duration(time.Minute)
	env, w := newTestPool(t, p, busyNodes())
	// The org's other pool holds 3 nodes, then gives one back.
	other := 3
	w.orgUsage = func() activities.OrgUsage { // called with w.mu held
		return activities.OrgUsage{Fabric: w.target + other, Cluster: w.target + other}
	}
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("a", env.Now().Add(-time.Hour)), pending("b", env.Now().Add(-time.Hour)), pending("c", env.Now().Add(-time.Hour)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.provisions, "grew past the org's ceiling of 5 (2 here, 3 in the other pool)")
		st := status(t, env)
		require.Contains(t, st.OrgCeiling, "org acme has 5 of its 5 nodes on the fabric")
		w.mu.Lock()
		other = 2
		w.mu.Unlock()
	}, 5*time.Minute)
	finish(env, 10*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1)
	require.Equal(t, 3, w.provisions[0].Target, "three pods wanted two nodes; the org's ceiling left room for one")
}

func TestOrgCostBudgetReachesThePlan(t *testing.T) {
	p := types.DefaultPolicy()
	p.OrgLimits = &types.OrgPolicy{Org: "acme", MaxHourlyCost: 10}
	env, w := newTestPool(t, p, busyNodes())
	w.orgUsage = func() activities.OrgUsage { return activities.OrgUsage{Fabric: 6, Cluster: 2, HourlyCost: 9.25} }
	runWithOneOverduePod(t, env, w, spec(p), time.Minute)
	require.NotEmpty(t, w.plans)
	in := w.plans[0]
	require.True(t, in.OrgBudget)
	require.InDelta(t, 0.75, in.OrgBudgetRoom, 1e-9, "the org's budget less what its pools cost now")
}

// A pool whose spec names no org limits (a tenant may write its own spec
// file) still obeys the platform's, which the platform's own worker hands
// over; a spec's limits can only tighten them.
func TestThePlatformsOrgCeilingBindsAPoolWhoseSpecNamesNone(t *testing.T) {
	p := types.DefaultPolicy()
	require.Nil(t, p.OrgLimits)
	env, w := newTestPool(t, p, busyNodes())
	sp := spec(p)
	sp.ProviderTaskQueue = "tenant-acme" // the tenant's own worker answers the provider's activities
	w.platformLimits = &types.OrgPolicy{Org: "acme", MaxNodes: 5}
	w.orgUsage = func() activities.OrgUsage {
		return activities.OrgUsage{Fabric: w.target + 3, Cluster: w.target + 3}
	}
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("a", env.Now().Add(-time.Hour)), pending("b", env.Now().Add(-time.Hour)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.provisions, "grew past the platform's ceiling of 5 for org acme")
		require.Contains(t, status(t, env).OrgCeiling, "org acme has 5 of its 5 nodes on the fabric")
	}, 5*time.Minute)
	finish(env, 6*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: sp})
	require.NoError(t, env.GetWorkflowError())
	require.NotEmpty(t, w.orgUsageQueues)
	for _, q := range w.orgUsageQueues {
		require.NotEqual(t, "tenant-acme", q, "the org's limits and usage came from the tenant's own worker")
	}
}

// With no org limits anywhere (neither the pool's policy nor the
// platform's), a scale-up asks the platform once, locally, and lists
// nothing: the org's pools are not listed on every scale-up.
func TestAScaleUpWithoutOrgLimitsListsNoPools(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	runWithOneOverduePod(t, env, w, spec(p), 2*time.Minute)
	require.NotEmpty(t, w.provisions)
	require.Positive(t, w.platformLimitReads, "the platform's limits were not asked")
	require.Empty(t, w.orgUsageQueues, "the org's pools were listed with no limit to check")
}
