package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/types"
)

func webBuffers() []types.BufferObservation {
	return []types.BufferObservation{
		{Namespace: "shop", Name: "web", Pods: 2, Requests: types.Resources{MilliCPU: 1500, Memory: 2 * types.GiB}},
		{Namespace: "shop", Name: "bad", Pods: -4, Requests: types.Resources{MilliCPU: 1500}},
	}
}

// A CapacityBuffer is headroom: the pool buys room for its pods before any
// pod waits, counts none of them pending, keeps the room at scale-down, and
// a bad buffer beside it adds nothing and says why in the status.
func TestCapacityBufferBuysRoomBeforeAnyPodWaits(t *testing.T) {
	p := types.DefaultPolicy() // no headroom of its own
	env, w := newTestPool(t, p, busyNodes())
	w.buffers = webBuffers()
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "no room bought for the buffer")
		st := status(t, env)
		require.Equal(t, 0, st.PendingPods, "buffer pods are not pending pods")
		require.Contains(t, st.Capacity, "buffers 2 pods (2 CapacityBuffers)")
		require.Contains(t, st.Capacity, "buffer shop/bad: pods must be within [0, 1000], got -4")
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n3", 0, 0))
		w.mu.Unlock()
		w.signal()
	}, time.Minute)
	finish(env, 30*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1, "bought again although the buffer's room is there")
	// finish deregisters the pool, which removes its three nodes last.
	require.NotContains(t, w.deleted[:len(w.deleted)-3], "n3", "scale-down took the buffer's node")
}

// A run begun before the change keeps deciding without buffers.
func TestCapacityBufferIsIgnoredByARunBegunBeforeIt(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.OnGetVersion(changeBuffers, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	w.buffers = webBuffers()
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.NotContains(t, st.Capacity, "buffers")
	}, 5*time.Second)
	finish(env, 10*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, w.provisions, "an old run bought for a buffer")
}
