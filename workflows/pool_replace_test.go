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

// TestPoolReplacesTwoUnderusedNodesByOneCheaper runs the replacement
// through the workflow: two 4-core nodes ($0.20/h each), each with one
// 2.4-core pod the other has no room for, are replaced by one 8-core
// sim-4c8g ($0.30/h here); it is bought first, and the old nodes are
// drained only once it is Ready.
func TestPoolReplacesTwoUnderusedNodesByOneCheaper(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.ExpireAfter = 0 // its nodes date from 1970: not expired, only underused
	old := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-small", State: types.NodeReady, CreatedAt: time.Unix(0, 0),
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 2400, Memory: 4 * types.GiB, Pods: 1},
			LargestPod:  types.Resources{MilliCPU: 2400, Memory: 4 * types.GiB, Pods: 1}}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{old("n1"), old("n2")})
	room := map[string]types.Resources{"sim-small": {MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110}, "sim-4c8g": {MilliCPU: 8000, Memory: 20 * types.GiB, Pods: 110}}
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		// The pool learns the sizes' room and prices from a plan; the one
		// pod pending fits no size, so it holds no scale-down back.
		res := activities.PlanResult{GroupID: "g1", GroupTarget: w.target, SizeRoom: room, SizePrice: map[string]float64{"sim-small": 0.20, "sim-4c8g": 0.30}}
		for _, pod := range in.Pods {
			res.Unplaceable = append(res.Unplaceable, activities.UnplaceablePod{Pod: pod.Key(), Code: sizing.CodeNoFit, Reason: "no size has its label"})
		}
		return res
	}
	env.RegisterDelayedCallback(func() { w.setPods(pending("nofit-x", env.Now().Add(-2*time.Minute))) }, time.Second)
	var boughtAt time.Time
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no replacement bought once the nodes were underused for consolidateAfter")
		require.Equal(t, "sim-4c8g", w.provisions[0].Size)
		require.Contains(t, string(w.provisions[0].IdempotencyKey), "/replacement")
		require.Empty(t, w.drained, "old nodes drained before their replacement is Ready")
		boughtAt = env.Now()
	}, 6*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes = append(w.nodes, types.NodeObservation{Name: "n3", Size: "sim-4c8g", State: types.NodeReady, CreatedAt: env.Now(), Allocatable: room["sim-4c8g"]})
		w.mu.Unlock()
		w.signal()
	}, 7*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Equal(t, []string{"n1", "n2"}, w.drained, "old nodes not drained once the replacement was Ready")
	}, 8*time.Minute)
	finish(env, 9*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.False(t, boughtAt.IsZero())
	st := status(t, env)
	var actions []string
	for _, d := range st.Decisions {
		actions = append(actions, d.Action+": "+d.Reason)
	}
	require.Contains(t, strings.Join(actions, "\n"), "replace: consolidation: 2 underused nodes")
	require.Contains(t, strings.Join(actions, "\n"), "scale-down: replacement: 2 nodes drained")
}
