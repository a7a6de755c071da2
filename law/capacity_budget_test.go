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

func TestBudgetsCutNamesTheBudgetThatBinds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		b         Budgets
		nodes     int
		cost      float64
		which     string
		room      float64
		wantToCut bool
	}{
		{"no budgets", Budgets{Spend: 5}, 3, 9, "", 0, false},
		{"nothing planned", Budgets{PoolPerHour: 1, Spend: 1, OrgCapped: true, OrgRoom: -1}, 0, 0, "", 0, false},
		{"within the pool's", Budgets{PoolPerHour: 1, Spend: 0.5}, 2, 0.5, "", 0, false},
		{"over the pool's", Budgets{PoolPerHour: 1, Spend: 0.7}, 2, 0.5, "cost budget", 0.3, true},
		{"the pool's first, over both", Budgets{PoolPerHour: 1, Spend: 0.7, OrgCapped: true, OrgRoom: 0.1}, 2, 0.5, "cost budget", 0.3, true},
		{"within the pool's, over the org's", Budgets{PoolPerHour: 1, Spend: 0, OrgCapped: true, OrgRoom: 0.25}, 2, 0.5, "org cost budget", 0.25, true},
		{"exactly the org's room", Budgets{OrgCapped: true, OrgRoom: 0.1 + 0.2}, 3, 0.3, "", 0, false},
		{"an org over its budget", Budgets{OrgCapped: true, OrgRoom: -1}, 1, 0.1, "org cost budget", -1, true},
	} {
		which, room, cut := tc.b.Cut(tc.nodes, tc.cost)
		assert.Equal(t, tc.wantToCut, cut, tc.name)
		assert.Equal(t, tc.which, which, tc.name)
		assert.InDelta(t, tc.room, room, 1e-12, tc.name)
	}
}

func TestBudgetsHoldFloorAtTheTighterCeiling(t *testing.T) {
	for _, tc := range []struct {
		name  string
		b     Budgets
		want  int
		price float64
		n     int
		note  string
	}{
		{"no budgets", Budgets{}, 5, 0.1, 5, ""},
		{"unpriced size", Budgets{PoolPerHour: 0.1}, 5, 0, 5, ""},
		{"the pool's leaves room", Budgets{PoolPerHour: 1, Spend: 0.4}, 5, 0.1, 5, ""},
		{"the pool's holds it", Budgets{PoolPerHour: 1, Spend: 0.8}, 5, 0.1, 2,
			"cost budget holds the floor: 5 more × s would cost $0.5000/h but $0.2000/h is left; buying 2 (a cost ceiling wins over minNodes)"},
		{"the org's holds it tighter", Budgets{PoolPerHour: 1, Spend: 0.8, OrgCapped: true, OrgRoom: 0.1}, 5, 0.1, 1,
			"org cost budget holds the floor: 5 more × s would cost $0.5000/h but $0.1000/h is left; buying 1 (a cost ceiling wins over minNodes)"},
		{"an org over its budget buys none", Budgets{OrgCapped: true, OrgRoom: -0.3}, 2, 0.1, 0,
			"org cost budget holds the floor: 2 more × s would cost $0.2000/h but $0.0000/h is left; buying 0 (a cost ceiling wins over minNodes)"},
	} {
		n, note := tc.b.HoldFloor(tc.want, "s", tc.price)
		assert.Equal(t, tc.n, n, tc.name)
		assert.Equal(t, tc.note, note, tc.name)
	}
}
