package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// The plan names each GPU size's model, and no size without GPUs: a GPU
// replacement (law.Rules.ReplaceGPU) buys only the old nodes' model.
func TestPlanReportsEachGPUSizesModel(t *testing.T) {
	a, pool := simPlanner(t, catalogs.Sim())
	pods := []types.PendingPod{{Namespace: "web", Name: "p1", Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}}}
	plan, err := a.PlanScaleUp(context.Background(), activities.PlanInput{Key: pool, Pods: pods, MaxNewNodes: 5})
	require.NoError(t, err)
	assert.Equal(t, "A10", plan.SizeGPUModel["sim-gpu-8c32g-1xa10"])
	for size := range plan.SizeGPUModel {
		assert.Positive(t, plan.SizeRoom[size].GPUs, "%s has no GPUs but a GPU model", size)
	}
	_, cpu := plan.SizeGPUModel["sim-2c4g"]
	assert.False(t, cpu, "a size without GPUs has no model")
}
