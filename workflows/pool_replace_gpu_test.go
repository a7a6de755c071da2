package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// TestPoolReplacesTwoGPUNodesByOneOfTheSameModel runs a GPU replacement
// (change ID law-replace-gpu) through the workflow: two full 1-GPU nodes
// ($1.00/h each) are replaced by one 2-GPU node of the same model
// ($1.50/h), learnt from the plan's SizeGPUModel; it is bought first and
// the old nodes are drained only once it is Ready.
func TestPoolReplacesTwoGPUNodesByOneOfTheSameModel(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.ExpireAfter = 0 // the nodes date from 1970: not expiry's case
	old := func(name string) types.NodeObservation {
		pod := types.Resources{MilliCPU: 3000, Memory: 8 * types.GiB, GPUs: 1, Pods: 1}
		return types.NodeObservation{Name: name, Size: "gpu-1", State: types.NodeReady, CreatedAt: time.Unix(0, 0),
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 14 * types.GiB, GPUs: 1, Pods: 110}, Requested: pod, LargestPod: pod}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{old("n1"), old("n2")})
	room := map[string]types.Resources{
		"gpu-1": {MilliCPU: 4000, Memory: 14 * types.GiB, GPUs: 1, Pods: 110},
		"gpu-2": {MilliCPU: 8000, Memory: 30 * types.GiB, GPUs: 2, Pods: 110},
		"t4-2":  {MilliCPU: 8000, Memory: 30 * types.GiB, GPUs: 2, Pods: 110},
	}
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		res := activities.PlanResult{GroupID: "g1", GroupTarget: w.target, SizeRoom: room,
			SizePrice:    map[string]float64{"gpu-1": 1, "gpu-2": 1.5, "t4-2": 1.2},
			SizeGPUModel: map[string]string{"gpu-1": "A10G", "gpu-2": "A10G", "t4-2": "T4"}}
		for _, pod := range in.Pods {
			res.Unplaceable = append(res.Unplaceable, activities.UnplaceablePod{Pod: pod.Key(), Code: sizing.CodeNoFit, Reason: "no size has its label"})
		}
		return res
	}
	env.RegisterDelayedCallback(func() { w.setPods(pending("nofit-x", env.Now().Add(-2*time.Minute))) }, time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no GPU replacement bought")
		require.Equal(t, "gpu-2", w.provisions[0].Size, "the replacement must keep the GPU model, not buy the cheaper T4")
		require.Empty(t, w.drained, "old nodes drained before their replacement is Ready")
	}, 6*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes = append(w.nodes, types.NodeObservation{Name: "n3", Size: "gpu-2", State: types.NodeReady, CreatedAt: env.Now(), Allocatable: room["gpu-2"]})
		w.mu.Unlock()
		w.signal()
	}, 7*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.ElementsMatch(t, []string{"n1", "n2"}, w.drained, "old nodes not drained once the replacement was Ready")
	}, 8*time.Minute)
	finish(env, 9*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	var actions []string
	for _, d := range status(t, env).Decisions {
		actions = append(actions, d.Action+": "+d.Reason)
	}
	require.Contains(t, strings.Join(actions, "\n"), "2 GPU nodes ($2.000/h) replaced by one gpu-2 ($1.500/h, same GPU model)")
}
