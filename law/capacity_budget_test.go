package law

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

func TestWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		name                string
		plan, budget, spend float64
		want                BudgetVerdict
	}{
		{"no budget", 5, 0, 100, BudgetVerdict{Unlimited: true, Allowed: true}},
		{"fits", 0.3, 1, 0.5, BudgetVerdict{Allowed: true, Room: 0.5}},
		{"exactly the room", 0.1 + 0.2, 1, 0.7, BudgetVerdict{Allowed: true, Room: 1 - 0.7}},
		{"over", 0.4, 1, 0.8, BudgetVerdict{Room: 1 - 0.8, Over: 0.4 - (1 - 0.8)}},
		{"spend already above budget", 0.1, 1, 1.5, BudgetVerdict{Room: 0, Over: 0.1}},
		{"nothing bought is always within", 0, 1, 1.5, BudgetVerdict{Allowed: true}},
	} {
		got := WithinBudget(tc.plan, tc.budget, tc.spend)
		assert.Equal(t, tc.want.Allowed, got.Allowed, tc.name)
		assert.Equal(t, tc.want.Unlimited, got.Unlimited, tc.name)
		assert.InDelta(t, tc.want.Room, got.Room, 1e-12, tc.name)
		assert.InDelta(t, tc.want.Over, got.Over, 1e-12, tc.name)
	}
	pool := WithinBudget(0, 2, 1)   // room 1
	org := WithinBudget(0, 10, 9.5) // room 0.5
	assert.InDelta(t, 0.5, Tightest(pool, org, WithinBudget(0, 0, 0)).Room, 1e-12)
	assert.True(t, Tightest(WithinBudget(0, 0, 0)).Unlimited)
}

func TestPoolSpendCountsBilledNodes(t *testing.T) {
	catalog := catalogs.Sim()
	nodes := []types.NodeObservation{
		{Name: "a", Size: "sim-4c8g", State: types.NodeReady},
		{Name: "b", Size: "sim-8c16g", State: types.NodeProvisioning},
		{Name: "c", Size: "sim-8c16g", State: types.NodeDeleting},
		{Name: "d", Size: "mystery", State: types.NodeReady},
	}
	cost, unpriced := PoolSpend(nodes, catalog)
	assert.InDelta(t, 0.04+0.08, cost, 1e-12)
	assert.Equal(t, []string{"d"}, unpriced)

	overridden, err := sizing.OverridePrices(catalog, map[string]float64{"sim-4c8g": 1})
	require.NoError(t, err)
	cost, _ = PoolSpend(nodes, overridden)
	assert.InDelta(t, 1+0.08, cost, 1e-12, "the pool's price overrides count")
}

func tenPods() []types.PendingPod {
	pods := make([]types.PendingPod, 10)
	for i := range pods {
		pods[i] = types.PendingPod{Namespace: "web", Name: fmt.Sprintf("p%d", i), Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}}
	}
	return pods
}

// Ten 1-CPU pods cost $0.16/h on the sim catalog; a $0.10/h room buys a
// part of that, and planning again within it places pods for no more.
func TestFitPlanToBudgetBuysFewerOrSmallerNodes(t *testing.T) {
	req := sizing.Request{Pending: tenPods(), Catalog: catalogs.Sim()}
	plan := sizing.PlanScaleUp(req)
	require.InDelta(t, 0.16, plan.HourlyCost, 1e-9)

	whole := FitPlanToBudget(plan, 0.5)
	assert.Equal(t, BudgetedPlan{Size: plan.Size, NewNodes: plan.NewNodes, HourlyCost: plan.HourlyCost}, whole)

	cut := FitPlanToBudget(plan, 0.10)
	assert.True(t, cut.Cut)
	assert.InDelta(t, 0.06, cut.Blocked, 1e-9, "what the budget blocks, per hour")
	assert.LessOrEqual(t, cut.HourlyCost, 0.10+1e-9)
	assert.Positive(t, cut.NewNodes)
	assert.Contains(t, cut.Reason, "exceeds the $0.1000/h left by $0.0600/h")
	assert.Contains(t, cut.Reason, fmt.Sprintf("buying %d × %s", cut.NewNodes, cut.Size))

	again := sizing.PlanScaleUp(BudgetRequest(req, cut))
	assert.Equal(t, cut.Size, again.Size)
	assert.LessOrEqual(t, again.NewNodes, cut.NewNodes)
	assert.LessOrEqual(t, again.HourlyCost, 0.10+1e-9)
	assert.GreaterOrEqual(t, len(again.Placements), 5, "the cut plan still places pods")
	assert.Less(t, len(again.Placements), 10)

	none := FitPlanToBudget(plan, 0.01)
	assert.Zero(t, none.NewNodes)
	assert.InDelta(t, 0.15, none.Blocked, 1e-9)
	assert.True(t, strings.HasSuffix(none.Reason, "no node fits the budget"), none.Reason)
	nothing := sizing.PlanScaleUp(BudgetRequest(req, none))
	assert.Zero(t, nothing.NewNodes, "a zero budgeted plan buys nothing")
	assert.False(t, math.IsNaN(nothing.HourlyCost))
}
