package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
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
		require.ElementsMatch(t, []string{"n1", "n2"}, w.drained, "old nodes not drained once the replacement was Ready")
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

// replaceWorld is TestPoolReplacesTwoUnderusedNodesByOneCheaper's pool,
// idle after 30 s as in the kwok run the hang was seen in, started at a
// moment with a fraction of a second, as a live clock is.
func replaceWorld(t *testing.T) (*testsuite.TestWorkflowEnvironment, *world, types.Policy, map[string]types.Resources) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.IdleWindow = types.Duration(30 * time.Second)
	old := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-small", State: types.NodeReady, CreatedAt: time.Date(2026, 12, 4, 11, 0, 0, 0, time.UTC),
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 2400, Memory: 4 * types.GiB, Pods: 1},
			LargestPod:  types.Resources{MilliCPU: 2400, Memory: 4 * types.GiB, Pods: 1}}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{old("n1"), old("n2")})
	env.SetStartTime(time.Date(2026, 12, 4, 12, 0, 0, 600_000_000, time.UTC))
	room := map[string]types.Resources{"sim-small": {MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110}, "sim-4c8g": {MilliCPU: 8000, Memory: 20 * types.GiB, Pods: 110}}
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		res := activities.PlanResult{GroupID: "g1", GroupTarget: w.target, SizeRoom: room, SizePrice: map[string]float64{"sim-small": 0.20, "sim-4c8g": 0.30}}
		for _, pod := range in.Pods {
			res.Unplaceable = append(res.Unplaceable, activities.UnplaceablePod{Pod: pod.Key(), Code: sizing.CodeNoFit, Reason: "no size has its label"})
		}
		return res
	}
	env.RegisterDelayedCallback(func() { w.setPods(pending("nofit-x", env.Now().Add(-2*time.Minute))) }, time.Second)
	return env, w, p, room
}

// replacementBoughtAt is when the replacement was asked for, zero if not.
func replacementBoughtAt(w *world) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range w.provisions {
		if strings.Contains(string(in.IdempotencyKey), "/replacement") {
			return w.boughtAt[len(w.boughtAt)-1], true
		}
	}
	return time.Time{}, false
}

// The new node comes up within the second it was asked for, stamped, as
// the API server stamps nodes, to the whole second: it is still the
// replacement's, so the old nodes are drained and the new node, empty for
// longer than the idle window meanwhile, is not taken by the idle rule.
// Before, the replacement waited for "the new node to be Ready" while the
// idle rule removed that very node 30 s later.
func TestPoolReplacementNodeStampedToTheSecondIsKept(t *testing.T) {
	env, w, p, room := replaceWorld(t)
	w.provisionTakes = 200 * time.Millisecond
	env.RegisterDelayedCallback(func() {
		at, ok := replacementBoughtAt(w)
		require.True(t, ok, "no replacement bought")
		w.mu.Lock()
		w.nodes = append(w.nodes, types.NodeObservation{Name: "n3", Size: "sim-4c8g", State: types.NodeReady, CreatedAt: at.Truncate(time.Second), Allocatable: room["sim-4c8g"]})
		w.mu.Unlock()
		w.signal()
	}, 6*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.NotContains(t, w.deleted, "n3", "the replacement's new node was removed")
		require.ElementsMatch(t, []string{"n1", "n2"}, w.drained, "old nodes not drained once the replacement was Ready")
	}, 8*time.Minute)
	finish(env, 9*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

// A replacement whose drain waits (an old node got a do-not-disrupt pod)
// keeps its new node past the idle window; once that node is gone the
// replacement is abandoned at once, with a decision saying why, and the
// pool goes on: nothing else is drained for it.
func TestPoolReplacementAbandonedWhenItsNewNodeIsGone(t *testing.T) {
	env, w, p, room := replaceWorld(t)
	env.RegisterDelayedCallback(func() {
		_, ok := replacementBoughtAt(w)
		require.True(t, ok, "no replacement bought")
		w.mu.Lock()
		w.nodes[1].DrainBlockers = []string{"pod default/keep has karpenter.sh/do-not-disrupt"}
		w.nodes = append(w.nodes, types.NodeObservation{Name: "n3", Size: "sim-4c8g", State: types.NodeReady, CreatedAt: env.Now(), Allocatable: room["sim-4c8g"]})
		w.mu.Unlock()
		w.signal()
	}, 6*time.Minute)
	env.RegisterDelayedCallback(func() { w.signal() }, 7*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		require.Empty(t, w.deleted, "a node removed while the replacement waits: its new node is not idle")
		// Someone deletes the new node.
		w.setNodesLocked(w.nodes[:2])
		w.target--
		w.mu.Unlock()
		w.signal()
	}, 8*time.Minute)
	var abandoned contract.DecisionRecord
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		for _, d := range st.Decisions {
			if d.Action == "replace-abandoned" {
				abandoned = d
			}
		}
		require.NotContains(t, strings.Join(st.Blocked, "; "), "waiting for the new", "the pool still waits for a node that is gone")
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Empty(t, w.drained, "old nodes drained for an abandoned replacement")
	}, 8*time.Minute+time.Second)
	finish(env, 9*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Contains(t, abandoned.Reason, "replacement of n1, n2 by one sim-4c8g abandoned: its new node n3 is gone")
	require.Contains(t, abandoned.Outcome, "the pool goes on")
}

// A replacement whose new node never comes is abandoned when the
// provision timeout since it was asked for passes, on the pool's own
// timer, not at some later observation.
func TestPoolReplacementAbandonedAtTheProvisionTimeout(t *testing.T) {
	env, w, p, _ := replaceWorld(t)
	var boughtAt time.Time
	env.RegisterDelayedCallback(func() {
		at, ok := replacementBoughtAt(w)
		require.True(t, ok, "no replacement bought")
		boughtAt = at
	}, 6*time.Minute)
	finish(env, 6*time.Minute+p.EffectiveProvisionTimeout()+time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	st := status(t, env)
	var abandoned *contract.DecisionRecord
	for i, d := range st.Decisions {
		if d.Action == "replace-abandoned" {
			abandoned = &st.Decisions[i]
		}
	}
	require.NotNil(t, abandoned, "no replace-abandoned decision")
	require.Contains(t, abandoned.Reason, "its new node was not Ready within the provision timeout (15m0s)")
	late := abandoned.At.Sub(boughtAt.Truncate(time.Second).Add(p.EffectiveProvisionTimeout()))
	require.True(t, late >= 0 && late < time.Second, "abandoned %s after the timeout", late)
}

// The new node is bought as the old nodes' group was: in its zone and
// capacity type, so pods pinned there can move and the drain finds a
// node of their template.
func TestPoolReplacementBuysInTheOldNodesZone(t *testing.T) {
	env, w, p, _ := replaceWorld(t)
	w.zone, w.capacity = "sim-b", types.CapacitySpot
	p.CapacityTypes = []types.CapacityType{types.CapacitySpot, types.CapacityOnDemand} // spot allowed: not drifted
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no replacement bought")
		in := w.provisions[0]
		require.Contains(t, string(in.IdempotencyKey), "/replacement", "%+v", in)
		require.Equal(t, "sim-b", in.Zone)
		require.Equal(t, types.CapacitySpot, in.CapacityType)
		require.Equal(t, "g1", in.GroupID, "the group of that size and offering grown")
	}, 6*time.Minute)
	finish(env, 7*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

// An old node whose group was left to the provider's placement is still
// replaced in its own zone when the new size is sold there (the plan's
// SizeZones): a new group pinned there, not the unpinned group of the
// size, which the provider may grow anywhere.
func TestPoolReplacementBuysInTheOldNodesLabelledZone(t *testing.T) {
	env, w, p, _ := replaceWorld(t)
	for i := range w.nodes {
		w.nodes[i].Labels = map[string]string{"topology.kubernetes.io/zone": "sim-c"}
	}
	planned := w.planner
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		res := planned(in)
		res.SizeZones = map[string][]string{"sim-4c8g": {"sim-a", "sim-b", "sim-c"}}
		return res
	}
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no replacement bought")
		in := w.provisions[0]
		require.Equal(t, "sim-c", in.Zone)
		require.Empty(t, in.GroupID, "the unpinned group of the size grown")
		require.Equal(t, 1, in.Target)
	}, 6*time.Minute)
	finish(env, 7*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}
