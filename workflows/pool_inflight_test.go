package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// A provision that runs for minutes (a slow provider, or a worker lost
// mid-call and retried) does not blind the pool: observations and the
// gate sent meanwhile are applied while the call runs, and the action
// still completes once.
func TestObservationsAndGateAreTakenInWhileAProvisionRuns(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	w.provisionTakes = 3 * time.Minute
	start := env.Now()
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("a", env.Now().Add(-time.Hour)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n3", 0.8, 0.8))
		w.mu.Unlock()
		w.signal()
		env.SignalWorkflow(contract.SignalClusterGate, contract.ClusterGate{Phase: contract.PhaseActive, Reachable: false, Reason: "watcher lost", Since: env.Now()})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		w.mu.Lock()
		planned := len(w.plans)
		w.mu.Unlock()
		require.Equal(t, 1, planned, "the scale-up was planned and its provision is under way")
		require.False(t, decidedOutcome(st, "asked for"), "the provision is still running: %+v", st.Decisions)
		require.False(t, st.LastObservationAt.Before(start.Add(time.Minute)), "the observation sent during the call was not applied: last is from %s", st.LastObservationAt)
		require.Equal(t, 3, st.Nodes, "status counts the node the new observation shows")
		require.False(t, st.Cluster.Reachable, "the gate sent during the call was not applied")
	}, time.Minute+time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Len(t, w.provisions, 1, "the provision was asked for once")
		require.True(t, decidedOutcome(st, "asked for"), "the provision never completed: %+v", st.Decisions)
	}, 4*time.Minute)
	finish(env, 5*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(types.DefaultPolicy())})
	require.NoError(t, env.GetWorkflowError())
}

func decidedOutcome(st contract.PoolStatus, prefix string) bool {
	for _, d := range st.Decisions {
		if len(d.Outcome) >= len(prefix) && d.Outcome[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
