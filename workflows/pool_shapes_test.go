package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// manyPending is n pods in shapes distinct requests, all pending since.
func manyPending(n, shapes int, since time.Time) []types.PendingPod {
	pods := make([]types.PendingPod, n)
	for i := range pods {
		s := i % shapes
		pods[i] = types.PendingPod{Namespace: "web", Name: fmt.Sprintf("api-%03d-%05d", s, i), Org: "acme", Project: "web", Service: "api",
			Requests:           types.Resources{MilliCPU: int64(10 + s%20), Memory: int64(16+s/20) * types.MiB, Pods: 1},
			UnschedulableSince: since.Add(time.Duration(i%30) * time.Second)}
	}
	return pods
}

// payloadSize is what the SDK's data converter makes of v.
func payloadSize(t *testing.T, v any) int {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return len(p.GetData())
}

// A pool observing 50,000 pending pods sizes every one of them, listed or
// not, with the real planner, and its observe payload and its
// Continue-As-New state stay far under Temporal's 2 MB payload limit.
func TestPoolSizesFiftyThousandPendingPodsFromTheirShapes(t *testing.T) {
	for _, shapes := range []int{5, 300} {
		t.Run(fmt.Sprintf("%d shapes", shapes), func(t *testing.T) {
			p := types.DefaultPolicy()
			p.MaxNodes = 2000
			env, w := newTestPool(t, p, busyNodes())
			catalog, err := sizing.Restrict(catalogs.Sim(), []string{"sim-4c8g"})
			require.NoError(t, err)
			room := map[string]types.Resources{"sim-4c8g": catalog[0].Allocatable()}
			// The real planner in place of the world's stand-in.
			w.planner = func(in activities.PlanInput) activities.PlanResult {
				plan := sizing.PlanScaleUp(sizing.Request{Pending: in.Pods, Existing: in.Existing, Catalog: catalog, MaxNewNodes: in.MaxNewNodes})
				res := activities.PlanResult{Size: plan.Size, NewNodes: plan.NewNodes, GroupID: "g1", GroupTarget: w.target, SizeRoom: room}
				for _, u := range plan.Unplaceable {
					res.Unplaceable = append(res.Unplaceable, activities.UnplaceablePod{Pod: u.Pod, Code: u.Code, Reason: u.Reason, Count: u.Count})
				}
				return res
			}
			var observeBytes, canBytes int
			var pendingSeen int
			env.RegisterDelayedCallback(func() {
				pods := manyPending(50_000, shapes, env.Now().Add(-2*time.Minute))
				w.mu.Lock()
				w.pods = pods
				w.mu.Unlock()
				// What the watcher sends: its part of the cluster sample.
				raw := w.observation()
				po := activities.PoolPart(map[string]types.PoolObservation{key().WorkflowID(): raw}, key(), raw.ObservedAt, "crossing")
				require.Equal(t, 50_000, po.PendingCount())
				observeBytes = payloadSize(t, po)
				env.SignalWorkflow(contract.SignalObserve, po)
			}, time.Minute)
			env.RegisterDelayedCallback(func() {
				pendingSeen = status(t, env).PendingPods
				env.SetContinueAsNewSuggested(true)
				env.SignalWorkflow(contract.SignalObserve, activities.PoolPart(map[string]types.PoolObservation{key().WorkflowID(): w.observation()}, key(), env.Now(), "crossing"))
			}, 2*time.Minute)
			env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
			require.True(t, env.IsWorkflowCompleted())
			var can *workflow.ContinueAsNewError
			require.ErrorAs(t, env.GetWorkflowError(), &can)
			canBytes = len(can.Input.GetPayloads()[0].GetData())
			var next PoolInput
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
			require.Equal(t, 50_000, next.State.Observation.PendingCount(), "pending pods counted across Continue-As-New")
			t.Logf("%d shapes: observe signal %d bytes, Continue-As-New state %d bytes", shapes, observeBytes, canBytes)
			require.Less(t, observeBytes, 256<<10, "observe signal payload")
			// The state also holds the provider's ~460 machines and a
			// purchase per listed pod and shape: a quarter of the limit at
			// most with a few hundred shapes.
			canLimit := 256 << 10
			if shapes > 100 {
				canLimit = 512 << 10
			}
			require.Less(t, canBytes, canLimit, "Continue-As-New state")
			require.Equal(t, 50_000, pendingSeen, "status counts every pending pod")

			// One decision sized every pod: the plan's entries stand for all
			// 50,000, and it bought what the planner buys for all of them
			// expanded one by one.
			require.NotEmpty(t, w.plans)
			sized := 0
			for _, pod := range w.plans[0].Pods {
				sized += pod.Pods()
			}
			require.Equal(t, 50_000, sized, "pods sized by the first plan")
			require.LessOrEqual(t, len(w.plans[0].Pods), types.MaxListedPending+shapes, "entries in the plan input")
			require.Less(t, payloadSize(t, w.plans[0]), 256<<10, "plan activity input")
			want := sizing.PlanScaleUp(sizing.Request{Pending: manyPending(50_000, shapes, time.Time{}), Catalog: catalog, MaxNewNodes: p.MaxNodes - 2})
			require.Empty(t, want.Unplaceable)
			require.Len(t, w.provisions, 1)
			t.Logf("%d shapes: one plan of %d entries bought %d × sim-4c8g for 50,000 pods", shapes, len(w.plans[0].Pods), w.provisions[0].Target-2)
			require.Equal(t, 2+want.NewNodes, w.provisions[0].Target, "nodes bought for 50,000 pods")
			require.LessOrEqual(t, w.provisions[0].Target, p.MaxNodes)
		})
	}
}

// Old observations carry only the list: the pool derives the shapes from
// it, and a list entry may not claim to stand for several pods.
func TestPoolRefusesCountedListEntriesAndBadShapes(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	env.RegisterDelayedCallback(func() {
		bad := w.observation()
		pod := pending("p1", env.Now())
		pod.Count = 1000
		bad.PendingPods = []types.PendingPod{pod}
		env.SignalWorkflow(contract.SignalObserve, bad)
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.LastRejected, "pending pod default/p1 has a count")
		bad := activities.PoolPart(map[string]types.PoolObservation{key().WorkflowID(): {PendingPods: manyPending(600, 1, env.Now())}}, key(), env.Now(), "crossing")
		bad.PendingShapes[0].Listed = 7
		env.SignalWorkflow(contract.SignalObserve, bad)
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.LastRejected, "pendingShapes list 7 pods but pendingPods holds 500")
		require.Zero(t, st.PendingPods, "a refused observation changed the pool")
	}, 3*time.Minute)
	finish(env, 4*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(types.DefaultPolicy())})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, w.provisions)
}
