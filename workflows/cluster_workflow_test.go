package workflows

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// clusterRecorder captures what the cluster workflow sends out: gate
// signals to pools and phase search attribute upserts.
type clusterRecorder struct {
	mu     sync.Mutex
	env    *testsuite.TestWorkflowEnvironment
	gates  []sentGate
	phases []string
}

type sentGate struct {
	pool string
	gate contract.ClusterGate
	at   time.Time
}

// lastGates is each pool's latest gate.
func (r *clusterRecorder) lastGates() map[string]sentGate {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]sentGate{}
	for _, g := range r.gates {
		out[g.pool] = g
	}
	return out
}

func (r *clusterRecorder) gateCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.gates)
}

var clusterPools = []string{
	"pool/acme/web/api/sim/east",
	"pool/acme/web/db/sim/east",
	"pool/globex/ml/infer/sim/east",
}

func declared(phase contract.ClusterPhase) contract.ClusterDeclared {
	return contract.ClusterDeclared{ID: "east", Phase: phase, Region: "us-east", Provider: "sim",
		SampleInterval: types.Duration(30 * time.Second), StaleAfter: types.Duration(2 * time.Minute)}
}

// newTestCluster runs the cluster workflow with the watcher mocked out (it
// never returns on its own); the test plays the watcher by signalling.
func newTestCluster(t *testing.T) (*testsuite.TestWorkflowEnvironment, *clusterRecorder) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(ClusterWorkflow)
	env.RegisterActivity(&activities.Activities{})
	rec := &clusterRecorder{env: env}
	env.OnActivity(a.WatchCluster, mock.Anything, mock.Anything).After(1000 * time.Hour).Return(nil)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, contract.SignalClusterGate, mock.Anything).Return(
		func(_, id, _, _ string, arg any) error {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.gates = append(rec.gates, sentGate{pool: id, gate: arg.(contract.ClusterGate), at: env.Now()})
			return nil
		})
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(saClusterPhase); ok {
			rec.phases = append(rec.phases, v)
		}
	}).Return(nil)
	return env, rec
}

func watcherSees(env *testsuite.TestWorkflowEnvironment, reachable bool, lastErr string) {
	r := contract.WatcherReport{Reachable: reachable, LastError: lastErr, At: env.Now()}
	if reachable {
		r.LastSync = env.Now()
	}
	env.SignalWorkflow(contract.SignalWatcherReport, r)
}

func registerPools(env *testsuite.TestWorkflowEnvironment) {
	for _, id := range clusterPools {
		env.SignalWorkflow(contract.SignalPoolRegistered, contract.PoolRegistration{PoolID: id, Thresholds: contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}})
	}
}

func clusterStatus(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.ClusterStatus {
	t.Helper()
	v, err := env.QueryWorkflow(contract.QueryClusterStatus)
	require.NoError(t, err)
	var st contract.ClusterStatus
	require.NoError(t, v.Get(&st))
	return st
}

// runCluster starts the workflow as EnrollCluster does, with the phase
// search attribute already set, and runs it to the end.
func runCluster(t *testing.T, env *testsuite.TestWorkflowEnvironment, phase contract.ClusterPhase) {
	t.Helper()
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(saClusterPhase.ValueSet(string(phase)))))
	env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(phase)})
}

func endCluster(env *testsuite.TestWorkflowEnvironment, at time.Duration) {
	env.RegisterDelayedCallback(env.CancelWorkflow, at)
}

func requireCanceled(t *testing.T, env *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	var canceled *temporal.CanceledError
	require.ErrorAs(t, env.GetWorkflowError(), &canceled)
}

// requireEveryPoolHeard: every pool's latest gate has the phase and
// reachability, and all were sent at the same moment.
func requireEveryPoolHeard(t *testing.T, rec *clusterRecorder, phase contract.ClusterPhase, reachable bool, at time.Time) {
	t.Helper()
	last := rec.lastGates()
	require.Len(t, last, len(clusterPools))
	for _, id := range clusterPools {
		g := last[id]
		require.Equal(t, phase, g.gate.Phase, "pool %s did not hear phase %s", id, phase)
		require.Equal(t, reachable, g.gate.Reachable, "pool %s: reachable", id)
		require.Equal(t, "us-east", g.gate.Region)
		require.WithinDuration(t, at, g.at, 0, "pool %s heard the gate at another moment", id)
		require.WithinDuration(t, at, g.gate.Since, 0)
	}
}

func setPhase(t *testing.T, env *testsuite.TestWorkflowEnvironment, phase contract.ClusterPhase, done func(contract.ClusterStatus)) {
	// Update IDs must differ: the same ID twice is deduplicated.
	env.UpdateWorkflow(contract.UpdateSetPhase, fmt.Sprintf("phase-%s-%s", phase, env.Now().Format(time.RFC3339Nano)), &testsuite.TestUpdateCallback{
		OnReject: func(err error) { t.Errorf("set-phase %s rejected: %v", phase, err) },
		OnAccept: func() {},
		OnComplete: func(v any, err error) {
			require.NoError(t, err)
			done(v.(contract.ClusterStatus))
		},
	}, contract.SetPhaseRequest{Phase: phase, Reason: "test moves it to " + string(phase), RequestedBy: "ops"})
}

func TestClusterPhaseChangeReachesEveryPoolAtOnce(t *testing.T) {
	env, rec := newTestCluster(t)
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		// Newly registered pools hear the current gate: pending, reachable.
		requireEveryPoolHeard(t, rec, contract.PhasePending, true, env.Now().Add(-4*time.Second))
	}, 5*time.Second)
	steps := []contract.ClusterPhase{contract.PhaseActive, contract.PhaseDraining, contract.PhaseDisabled, contract.PhasePending, contract.PhaseActive}
	for i, phase := range steps {
		at := time.Duration(10*(i+1)) * time.Second
		var answer *contract.ClusterStatus
		var before int
		var asked time.Time
		env.RegisterDelayedCallback(func() {
			before, asked = rec.gateCount(), env.Now()
			setPhase(t, env, phase, func(st contract.ClusterStatus) { answer = &st })
		}, at)
		env.RegisterDelayedCallback(func() {
			require.NotNil(t, answer, "set-phase %s did not complete", phase)
			require.Equal(t, phase, answer.Declared.Phase)
			// Every pool was signalled once, all at the moment it was asked.
			require.Equal(t, before+len(clusterPools), rec.gateCount())
			requireEveryPoolHeard(t, rec, phase, true, asked)
			st := clusterStatus(t, env)
			require.Equal(t, phase, st.Declared.Phase)
			require.Equal(t, phase, st.LastPhaseChange.To)
			require.Equal(t, "ops", st.LastPhaseChange.RequestedBy)
		}, at+time.Second)
	}
	endCluster(env, time.Minute)
	runCluster(t, env, contract.PhasePending)
	requireCanceled(t, env)
	require.Equal(t, []string{"active", "draining", "disabled", "pending", "active"}, rec.phases,
		"VisorClusterPhase not upserted on each change")
}

func TestClusterRefusesBadPhaseChangesAndTellsNoPool(t *testing.T) {
	env, rec := newTestCluster(t)
	rejected := map[string]string{}
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		before := rec.gateCount()
		for name, req := range map[string]contract.SetPhaseRequest{
			"unknown":   {Phase: "paused", Reason: "x"},
			"no-reason": {Phase: contract.PhaseActive, Reason: "  "},
		} {
			env.UpdateWorkflow(contract.UpdateSetPhase, name, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { rejected[name] = err.Error() }, OnAccept: func() { t.Errorf("%s accepted", name) }, OnComplete: func(any, error) {},
			}, req)
		}
		require.Equal(t, before, rec.gateCount(), "a refused phase change reached pools")
		require.Equal(t, contract.PhasePending, clusterStatus(t, env).Declared.Phase)
	}, 10*time.Second)
	endCluster(env, time.Minute)
	runCluster(t, env, contract.PhasePending)
	requireCanceled(t, env)
	require.Contains(t, rejected["unknown"], `phase "paused" is not one of pending, active, draining, disabled`)
	require.Contains(t, rejected["no-reason"], "reason is empty")
	require.Empty(t, rec.phases)
}

func TestClusterPartitionFreezesPoolsAndReconnectResumes(t *testing.T) {
	env, rec := newTestCluster(t)
	var reachedAt time.Time
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
		reachedAt = env.Now()
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, true, reachedAt)
		require.Empty(t, clusterStatus(t, env).Frozen)
	}, 2*time.Minute)
	// No sample for StaleAfter (2m): the stale timer closes the gate at
	// exactly reachedAt+2m, without any message arriving.
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, false, reachedAt.Add(2*time.Minute))
		st := clusterStatus(t, env)
		require.False(t, st.Observed.Reachable)
		require.Equal(t, contract.SyncDisconnected, st.Observed.SyncState)
		require.Contains(t, st.Frozen, "observations are stale")
		require.Contains(t, st.Frozen, "none within 2m0s")
	}, 2*time.Minute+2*time.Second)
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
	}, 5*time.Minute)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, true, env.Now().Add(-time.Second))
		st := clusterStatus(t, env)
		require.True(t, st.Observed.Reachable)
		require.Equal(t, contract.SyncConnected, st.Observed.SyncState)
		require.Empty(t, st.Frozen)
		watcherSees(env, false, "dial tcp 10.0.0.1:443: i/o timeout")
	}, 5*time.Minute+time.Second)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, false, env.Now().Add(-time.Second))
		require.Equal(t, "cluster unreachable: dial tcp 10.0.0.1:443: i/o timeout", clusterStatus(t, env).Frozen)
		watcherSees(env, true, "")
	}, 5*time.Minute+2*time.Second)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, true, env.Now().Add(-time.Second))
	}, 5*time.Minute+3*time.Second)
	endCluster(env, 6*time.Minute)
	runCluster(t, env, contract.PhaseActive)
	requireCanceled(t, env)
	// One gate per pool per change: open, stale, open, unreachable, open.
	require.Equal(t, 5*len(clusterPools), rec.gateCount())
}

func TestClusterWatcherFailureClosesTheGateAndRestartsIt(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(ClusterWorkflow)
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.WatchCluster, mock.Anything, mock.Anything).Return(
		temporal.NewNonRetryableApplicationError("cluster east is not configured on this worker", "Permanent", nil)).Once()
	env.OnActivity(a.WatchCluster, mock.Anything, mock.Anything).After(1000 * time.Hour).Return(nil)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(nil)
	env.RegisterDelayedCallback(func() {
		st := clusterStatus(t, env)
		require.False(t, st.Observed.Reachable)
		require.Contains(t, st.Frozen, "watcher failed")
		require.Contains(t, st.Frozen, "not configured on this worker")
		env.AssertActivityNumberOfCalls(t, "WatchCluster", 1)
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		env.AssertActivityNumberOfCalls(t, "WatchCluster", 2)
	}, 15*time.Second)
	endCluster(env, time.Minute)
	runCluster(t, env, contract.PhaseActive)
	requireCanceled(t, env)
}

func TestClusterStaleBoundNeverBelowTheWatchersReportInterval(t *testing.T) {
	bound := func(sample, stale time.Duration) time.Duration {
		c := &cluster{state: &ClusterState{Declared: contract.ClusterDeclared{SampleInterval: types.Duration(sample), StaleAfter: types.Duration(stale)}}}
		return c.staleAfter()
	}
	require.Equal(t, 2*time.Minute, bound(30*time.Second, 10*time.Second), "a 10s bound would flap between the watcher's minutely reports")
	require.Equal(t, 10*time.Minute, bound(30*time.Second, 10*time.Minute))
	require.Equal(t, 3*time.Minute, bound(0, 0), "default: 4 samples of 30s plus a minute")
}

// A watcher reporting every 30s keeps the gate open and costs a staleness
// timer each time one fires (every 1.5-2m here), not one per report (20).
func TestClusterKeepsOneStaleTimerAcrossReports(t *testing.T) {
	env, rec := newTestCluster(t)
	timers := 0
	env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	for at := time.Second; at < 10*time.Minute; at += 30 * time.Second {
		env.RegisterDelayedCallback(func() { watcherSees(env, true, "") }, at)
	}
	env.RegisterDelayedCallback(func() { registerPools(env) }, 2*time.Second)
	endCluster(env, 10*time.Minute)
	runCluster(t, env, contract.PhaseActive)
	requireCanceled(t, env)
	for _, g := range rec.gates {
		require.True(t, g.gate.Reachable, "the gate closed although the watcher reported every 30s")
	}
	require.LessOrEqual(t, timers, 8, "20 reports in 10m started %d timers", timers)
	require.GreaterOrEqual(t, timers, 5)
}
