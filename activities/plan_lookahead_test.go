package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// Three 4-CPU pods alone pack cheapest on one sim-16c64g; with the pool's
// running mix of small pods (PlanInput.Expected) the plan buys the size
// cheaper per unit, one sim-8c16g each, and nothing for the mix.
func TestPlanSizesForTheExpectedMix(t *testing.T) {
	a, pool := simPlanner(t, catalogs.Sim())
	big := types.Resources{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 1}
	var pods []types.PendingPod
	for _, name := range []string{"p1", "p2", "p3"} {
		pods = append(pods, types.PendingPod{Namespace: "web", Name: name, Requests: big})
	}
	in := activities.PlanInput{Key: pool, Pods: pods, MaxNewNodes: 5, FewerNodes: true}
	plan, err := a.PlanScaleUp(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "sim-16c64g", plan.Size, "the batch alone")
	in.Expected = []types.PendingPod{
		{Namespace: "visor:expected", Name: "small", Requests: types.Resources{MilliCPU: 500, Memory: types.GiB, Pods: 1}, Count: 40},
		{Namespace: "visor:expected", Name: "big", Requests: big, Count: 5},
	}
	plan, err = a.PlanScaleUp(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "sim-8c16g", plan.Size)
	require.Equal(t, 3, plan.NewNodes)
}
