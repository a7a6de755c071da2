package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// gateInput decides over o at now with the default policy.
func gateInput(o *types.PoolObservation, now time.Time) law.DecisionInput {
	return law.DecisionInput{Policy: types.DefaultPolicy(), Observation: o, Now: now, IdleSince: map[string]time.Time{}}
}

// What a pool does with each gate the cluster sends: active scales both
// ways, draining never adds capacity, pending and disabled do nothing, and
// an unreachable cluster freezes scale-down.
func TestPoolObeysEachClusterGate(t *testing.T) {
	now := t0.Add(time.Hour)
	// Demand: a pod overdue, busy nodes. Surplus: an idle node past its
	// window, nothing pending.
	demand := gateInput(obs(now, threeNodes(), pending("p1", now.Add(-5*time.Minute))), now)
	surplusNodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.05, 0.05)}
	surplus := gateInput(obs(now, surplusNodes), now)
	surplus.IdleSince = map[string]time.Time{"n3": now.Add(-time.Hour)}

	cases := []struct {
		phase           contract.ClusterPhase
		reachable       bool
		up, down        law.Action
		blocked, frozen string
	}{
		{contract.PhaseActive, true, law.ActionScaleUp, law.ActionScaleDown, "", ""},
		{contract.PhaseDraining, true, law.ActionNone, law.ActionScaleDown, "cluster is draining", ""},
		{contract.PhasePending, true, law.ActionNone, law.ActionNone, "cluster is pending", "cluster is pending"},
		{contract.PhaseDisabled, true, law.ActionNone, law.ActionNone, "cluster is disabled", "cluster is disabled"},
		{contract.PhaseActive, false, law.ActionScaleUp, law.ActionNone, "", "cluster unreachable"},
		{contract.PhaseDraining, false, law.ActionNone, law.ActionNone, "cluster is draining", "cluster is draining"},
	}
	for _, tc := range cases {
		name := string(tc.phase)
		if !tc.reachable {
			name += "/unreachable"
		}
		t.Run(name, func(t *testing.T) {
			s := &PoolState{Gate: contract.ClusterGate{Phase: tc.phase, Reachable: tc.reachable}}
			demand.Gate, surplus.Gate = s.LawGate(), s.LawGate()
			up := law.Decide(demand)
			require.Equal(t, tc.up, up.Action, up.Reason)
			if tc.blocked != "" {
				require.Contains(t, up.Blocked[0], tc.blocked)
			}
			down := law.Decide(surplus)
			require.Equal(t, tc.down, down.Action, down.Reason)
			if tc.frozen != "" {
				require.Contains(t, down.Frozen, tc.frozen)
			}
		})
	}
}

// A pool on an unreachable cluster keeps its nodes and target however long
// a node has been idle, says why, and scales down once the cluster is back.
func TestPoolFreezesScaleDownDuringPartitionAndResumes(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.05, 0.05)})
	gate := func(reachable bool) func() {
		return func() {
			g := contract.ClusterGate{Phase: contract.PhaseActive, Reachable: reachable, Region: "us-east", Since: env.Now()}
			if !reachable {
				g.Reason = "no successful sample within 2m0s"
			}
			env.SignalWorkflow(contract.SignalClusterGate, g)
		}
	}
	env.RegisterDelayedCallback(gate(false), time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.deleted, "scaled down while the cluster was unreachable")
		require.Empty(t, w.drained)
		st := status(t, env)
		require.Contains(t, st.Frozen, "cluster unreachable: scale-down frozen")
		require.Contains(t, st.Frozen, "no successful sample within 2m0s", "the pool does not say why the cluster froze it")
		require.Equal(t, 3, st.TargetNodes, "the last target was not kept")
		require.False(t, st.Cluster.Reachable)
	}, 30*time.Minute)
	env.RegisterDelayedCallback(gate(true), 30*time.Minute+time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"n3"}, w.deleted, "did not resume scale-down on reconnect")
		require.Empty(t, status(t, env).Frozen)
	}, 31*time.Minute)
	finish(env, 32*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}
