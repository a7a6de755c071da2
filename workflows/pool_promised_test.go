package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// A pod that goes pending while the node bought for another still boots
// buys its own node at once: the booting node's room is promised to the
// pod it was bought for (PlanInput.Promised), not free for the next one.
func TestAPodDoesNotCountOnRoomPromisedToAnother(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	catalog, err := sizing.Restrict(catalogs.Sim(), []string{"sim-4c8g"})
	require.NoError(t, err)
	room := map[string]types.Resources{"sim-4c8g": catalog[0].Allocatable()}
	// The real planner; a sim-4c8g (the world's group size) holds one of these pods.
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		plan := sizing.PlanScaleUp(sizing.Request{Pending: in.Pods, Promised: in.Promised, Existing: in.Existing, Catalog: catalog, MaxNewNodes: in.MaxNewNodes})
		return activities.PlanResult{GroupID: "g1", GroupTarget: w.target, Size: plan.Size, NewNodes: plan.NewNodes, SizeRoom: room}
	}
	big := func(name string, since time.Time) types.PendingPod {
		p := pending(name, since)
		p.Requests.MilliCPU = 3000
		return p
	}
	env.RegisterDelayedCallback(func() {
		w.setPods(big("a", env.Now().Add(-2*time.Minute)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		require.Len(t, w.provisions, 1, "a bought its node")
		// a still waits for its booting node; b goes pending.
		w.pods = append(w.pods, big("b", env.Now().Add(-2*time.Minute)))
		w.mu.Unlock()
		w.signal()
	}, 40*time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 2, "b bought its own node while a's booted")
		last := w.plans[len(w.plans)-1]
		require.Len(t, last.Promised, 1)
		require.Equal(t, "default/a", last.Promised[0].Key())
		// The read act made for this purchase: the plan reads no other.
		require.True(t, last.GroupsKnown, "the plan was not given the groups just read")
		require.Len(t, last.Groups, 1)
		require.Equal(t, w.provisions[0].Target, last.Groups[0].Target)
		require.Equal(t, w.provisions[0].Target+1, w.provisions[1].Target)
	}, 80*time.Second)
	finish(env, 2*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(types.DefaultPolicy())})
	require.NoError(t, env.GetWorkflowError())
}

// A pod still pending beside a node that turned Ready seconds ago is not
// bought for: kube-scheduler has not retried it against that node yet
// (its backoff, then a sample to show the binding). The plan counts the
// node's free room as it counts booting room (planRoom), for the no-help
// grace; the real scheduler's suite caught a node bought twice this way.
func TestAJustReadyNodesRoomIsPlannedOnUntilTheSchedulerRetried(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	catalog, err := sizing.Restrict(catalogs.Sim(), []string{"sim-4c8g"})
	require.NoError(t, err)
	room := map[string]types.Resources{"sim-4c8g": catalog[0].Allocatable()}
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		plan := sizing.PlanScaleUp(sizing.Request{Pending: in.Pods, Promised: in.Promised, Existing: in.Existing, Catalog: catalog, MaxNewNodes: in.MaxNewNodes})
		return activities.PlanResult{GroupID: "g1", GroupTarget: w.target, Size: plan.Size, NewNodes: plan.NewNodes, SizeRoom: room}
	}
	a := pending("a", env.Now().Add(-2*time.Minute))
	a.Requests.MilliCPU = 2500
	b := pending("b", env.Now().Add(-2*time.Minute))
	env.RegisterDelayedCallback(func() { w.setPods(a) }, time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		require.Len(t, w.provisions, 1, "a bought its node")
		// a's node joins, Ready and empty; a is not bound yet, and b
		// (which fits beside a there) goes pending.
		n3 := node("n3", 0, 0)
		n3.CreatedAt = env.Now().Add(-5 * time.Second)
		w.nodes = append(w.nodes, n3)
		w.pods = []types.PendingPod{a, b}
		w.mu.Unlock()
		w.signal()
	}, 40*time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "b was bought a node while the just-Ready n3 had room for it")
		last := w.plans[len(w.plans)-1]
		var names []string
		for _, n := range last.Existing {
			names = append(names, n.Name)
		}
		require.Contains(t, names, "n3", "the plan did not count the just-Ready node's room")
		// The scheduler retries: both land on n3.
		w.pods = nil
		w.nodes[len(w.nodes)-1].Requested = node("n3", 0.75, 0.2).Requested
	}, 55*time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1)
	}, 2*time.Minute)
	finish(env, 3*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(types.DefaultPolicy())})
	require.NoError(t, env.GetWorkflowError())
}
