package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// A price adjustment is what the plan, its budgets and the prices the
// pool publishes use: at half the list price ($0.10/h for sim-16c64g)
// the same $0.40/h org room holds the floor's 4 nodes, not 2.
func TestPlanBuysAndBudgetsAtAdjustedPrices(t *testing.T) {
	a, _ := simPlanner(t, nil)
	pool := types.PoolKey{Org: "globex", Project: "ml", Service: "infer", Provider: "sim", Cluster: "dev"}
	in := activities.PlanInput{Key: pool, AllowedSizes: []string{"sim-16c64g"}, MinNewNodes: 5, MaxNewNodes: 5, OrgBudget: true, OrgBudgetRoom: 0.40,
		PriceAdjustments: []types.PriceAdjustment{{Sizes: []string{"sim-16c64g"}, Adjustment: "-50%"}}}
	plan, err := a.PlanScaleUp(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, 4, plan.NewNodes, "budget %q", plan.Budget)
	require.InDelta(t, 0.10, plan.SizePrice["sim-16c64g"], 1e-9, "the price the pool publishes and budgets with")
	require.InDelta(t, 0.40, plan.HourlyCost, 1e-9)
	in.PriceAdjustments = []types.PriceAdjustment{{Adjustment: "50%"}}
	_, err = a.PlanScaleUp(context.Background(), in)
	require.ErrorContains(t, err, "priceAdjustments[0].adjustment")
}

// A plan never grows a group it is told to skip (a drifted one): it asks
// for a new group instead.
func TestPlanSkipsDriftedGroups(t *testing.T) {
	fleet, err := sim.New(sim.Config{Cluster: "dev", Seed: 3})
	require.NoError(t, err)
	a := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: fleet}}}
	pool := types.PoolKey{Org: "globex", Project: "ml", Service: "infer", Provider: "sim", Cluster: "dev"}
	g, err := fleet.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: pool, Name: activities.GroupName(pool, "sim-16c64g"), Size: "sim-16c64g", TargetSize: 0}, "create-old")
	require.NoError(t, err)
	in := activities.PlanInput{Key: pool, AllowedSizes: []string{"sim-16c64g"}, MinNewNodes: 1, MaxNewNodes: 1}
	plan, err := a.PlanScaleUp(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, g.ID, plan.GroupID, "the group of that size is not grown")
	in.SkipGroups = []string{g.ID}
	plan, err = a.PlanScaleUp(context.Background(), in)
	require.NoError(t, err)
	require.Empty(t, plan.GroupID, "a drifted group was grown")
	require.Equal(t, 1, plan.NewNodes)
}
