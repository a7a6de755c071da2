package activities_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/types"
)

// The platform's org cost ceiling wins over a pool's floor: globex
// ($0.40/h) asking for minNodes 5 of sim-16c64g ($0.20/h each) gets two,
// and the plan says why; with room for the floor it gets all five.
func TestOrgCostCeilingWinsOverTheFloor(t *testing.T) {
	a, _ := simPlanner(t, nil)
	pool := types.PoolKey{Org: "globex", Project: "ml", Service: "infer", Provider: "sim", Cluster: "dev"}
	in := activities.PlanInput{Key: pool, AllowedSizes: []string{"sim-16c64g"}, MinNewNodes: 5, MaxNewNodes: 5, OrgBudget: true, OrgBudgetRoom: 0.40}
	plan, err := a.PlanScaleUp(context.Background(), in)
	require.NoError(t, err)
	if plan.NewNodes != 2 || plan.HourlyCost > 0.40+1e-9 || !strings.Contains(plan.Budget, "org cost budget holds the floor") {
		t.Fatalf("floor 5 under a $0.40/h org ceiling: %d × %s at $%.2f/h, budget %q; want 2 and the ceiling named", plan.NewNodes, plan.Size, plan.HourlyCost, plan.Budget)
	}
	in.OrgBudgetRoom = -0.10 // the org is over its ceiling already
	if plan, err = a.PlanScaleUp(context.Background(), in); err != nil || plan.NewNodes != 0 || plan.Budget == "" {
		t.Fatalf("an org over its ceiling: %d nodes, budget %q, err %v; want none bought and why", plan.NewNodes, plan.Budget, err)
	}
	in.OrgBudgetRoom = 2
	if plan, err = a.PlanScaleUp(context.Background(), in); err != nil || plan.NewNodes != 5 || plan.Budget != "" {
		t.Fatalf("room for the floor: %d nodes, budget %q, err %v; want all 5", plan.NewNodes, plan.Budget, err)
	}
	// The pool's own budget holds the floor the same way.
	in.OrgBudget, in.MaxHourlyCost = false, 0.60
	if plan, err = a.PlanScaleUp(context.Background(), in); err != nil || plan.NewNodes != 3 || !strings.Contains(plan.Budget, "cost budget holds the floor") {
		t.Fatalf("floor 5 under a $0.60/h pool budget: %d nodes, budget %q, err %v; want 3", plan.NewNodes, plan.Budget, err)
	}
}
