package workflows

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
)

// updateOutcome is what one update call came to.
type updateOutcome struct {
	rejected error
	result   any
	err      error
	done     bool
}

var updateSeq int

// callUpdate sends an update with a fresh ID and records its outcome.
func callUpdate(env *testsuite.TestWorkflowEnvironment, name string, arg any) *updateOutcome {
	updateSeq++
	out := &updateOutcome{}
	env.UpdateWorkflow(name, fmt.Sprintf("%s-%d", name, updateSeq), &testsuite.TestUpdateCallback{
		OnReject:   func(err error) { out.rejected, out.done = err, true },
		OnAccept:   func() {},
		OnComplete: func(v any, err error) { out.result, out.err, out.done = v, err, true },
	}, arg)
	return out
}

func signed(t *testing.T, token string, r contract.ObservedReport) contract.ObservedReport {
	t.Helper()
	s, err := contract.SignObservedReport(token, r)
	require.NoError(t, err)
	return s
}

func agentReport(at time.Time, sync contract.SyncState) contract.ObservedReport {
	return contract.ObservedReport{ClusterID: "east", ReportedAt: at, SyncState: sync,
		Capabilities: contract.Capabilities{MIG: true, RDMA: true}, AgentVersion: "agent/1.4.2", Nodes: 12, Pools: 3}
}

func mint(t *testing.T) contract.EnrollmentToken {
	t.Helper()
	tok, err := contract.MintEnrollmentToken()
	require.NoError(t, err)
	return tok
}

func runEnrolled(t *testing.T, env *testsuite.TestWorkflowEnvironment, tok contract.EnrollmentToken) {
	t.Helper()
	env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(contract.PhaseActive), TokenHash: tok.Hash, ReportKey: tok.ReportKey})
}

func statusJSON(t *testing.T, env *testsuite.TestWorkflowEnvironment) string {
	b, err := json.Marshal(clusterStatus(t, env))
	require.NoError(t, err)
	return string(b)
}

func TestClusterAcceptsOnlyFreshReportsSignedWithItsToken(t *testing.T) {
	env, rec := newTestCluster(t)
	tok, other := mint(t), mint(t)
	var accepted contract.ObservedReport
	var good *updateOutcome
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		accepted = signed(t, tok.Token, agentReport(env.Now().Add(-1500*time.Millisecond), contract.SyncConnected))
		good = callUpdate(env, contract.UpdateReportObserved, accepted)
	}, 10*time.Second)
	refusals := map[string]*updateOutcome{}
	var before string
	var gatesBefore int
	env.RegisterDelayedCallback(func() {
		require.True(t, good.done)
		require.NoError(t, good.rejected)
		st := good.result.(contract.ClusterStatus)
		require.Equal(t, contract.Capabilities{MIG: true, RDMA: true}, st.Observed.Capabilities)
		require.Equal(t, "agent/1.4.2", st.Observed.AgentVersion)
		require.Equal(t, 12, st.Observed.Nodes)
		require.Equal(t, 3, st.Observed.Pools)
		require.Equal(t, int64(1500), st.Observed.LagMillis)
		require.Equal(t, contract.SyncConnected, st.Observed.SyncState)
		require.True(t, st.Observed.Reachable)

		before, gatesBefore = statusJSON(t, env), rec.gateCount()
		now := env.Now()
		tampered := signed(t, tok.Token, agentReport(now, contract.SyncConnected))
		tampered.Nodes = 999
		bad := agentReport(now, "up")
		for name, r := range map[string]contract.ObservedReport{
			"wrong token": signed(t, other.Token, agentReport(now, contract.SyncConnected)),
			"tampered":    tampered,
			"other cluster": signed(t, tok.Token, func() contract.ObservedReport {
				r := agentReport(now, contract.SyncSyncing)
				r.ClusterID = "west"
				return r
			}()),
			"stale":       signed(t, tok.Token, agentReport(now.Add(-6*time.Minute), contract.SyncSyncing)),
			"future":      signed(t, tok.Token, agentReport(now.Add(6*time.Minute), contract.SyncSyncing)),
			"replay":      accepted,
			"unsigned":    agentReport(now, contract.SyncSyncing),
			"bad content": signed(t, tok.Token, bad),
		} {
			refusals[name] = callUpdate(env, contract.UpdateReportObserved, r)
		}
	}, 20*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, before, statusJSON(t, env), "a refused report changed the state")
		require.Equal(t, gatesBefore, rec.gateCount(), "a refused report reached pools")
	}, 21*time.Second)
	endCluster(env, time.Minute)
	runEnrolled(t, env, tok)
	requireCanceled(t, env)
	want := map[string]string{
		"wrong token":   "signature does not verify with the cluster's enrollment token",
		"tampered":      "signature does not verify",
		"other cluster": `it is for cluster "west", this is cluster "east"`,
		"stale":         "is 6m0s from the workflow's clock, more than 5m0s",
		"future":        "is -6m0s from the workflow's clock",
		"replay":        "is not after the last accepted report's",
		"unsigned":      "signature is not a base64url Ed25519 signature",
		"bad content":   `syncState "up" is not one of`,
	}
	for name, msg := range want {
		out := refusals[name]
		require.NotNil(t, out, name)
		require.True(t, out.done, name)
		require.Error(t, out.rejected, "%s was accepted", name)
		require.Contains(t, out.rejected.Error(), msg, name)
		require.NotContains(t, out.rejected.Error(), tok.Token)
	}
}

func TestClusterRotateTokenRevokesTheOldOne(t *testing.T) {
	env, _ := newTestCluster(t)
	old, next := mint(t), mint(t)
	var rotated, oldAfter, newAfter *updateOutcome
	bad := map[string]*updateOutcome{}
	env.RegisterDelayedCallback(func() { watcherSees(env, true, "") }, time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, contract.TokenFingerprint(old.Hash), clusterStatus(t, env).TokenFingerprint)
		for name, req := range map[string]contract.RotateTokenRequest{
			"same token": {TokenHash: old.Hash, ReportKey: old.ReportKey, Reason: "x"},
			"bad hash":   {TokenHash: "ABC", ReportKey: next.ReportKey, Reason: "x"},
			"bad key":    {TokenHash: next.Hash, ReportKey: "nope", Reason: "x"},
			"no reason":  {TokenHash: next.Hash, ReportKey: next.ReportKey},
		} {
			bad[name] = callUpdate(env, contract.UpdateRotateToken, req)
		}
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, contract.TokenFingerprint(old.Hash), clusterStatus(t, env).TokenFingerprint, "a refused rotation changed the token")
		rotated = callUpdate(env, contract.UpdateRotateToken, contract.RotateTokenRequest{TokenHash: next.Hash, ReportKey: next.ReportKey, Reason: "leaked in a log", RequestedBy: "ops"})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		oldAfter = callUpdate(env, contract.UpdateReportObserved, signed(t, old.Token, agentReport(env.Now(), contract.SyncConnected)))
		newAfter = callUpdate(env, contract.UpdateReportObserved, signed(t, next.Token, agentReport(env.Now(), contract.SyncConnected)))
	}, 11*time.Second)
	env.RegisterDelayedCallback(func() {
		st := clusterStatus(t, env)
		require.Equal(t, contract.TokenFingerprint(next.Hash), st.TokenFingerprint)
		require.WithinDuration(t, env.Now().Add(-2*time.Second), st.TokenIssuedAt, 0)
	}, 12*time.Second)
	endCluster(env, time.Minute)
	runEnrolled(t, env, old)
	requireCanceled(t, env)

	require.NoError(t, rotated.rejected)
	issued := rotated.result.(contract.TokenIssued)
	require.Equal(t, "east", issued.Cluster)
	require.Equal(t, contract.TokenFingerprint(next.Hash), issued.Fingerprint)
	require.ErrorContains(t, oldAfter.rejected, "does not verify", "the revoked token still works")
	require.NoError(t, newAfter.rejected)
	require.NoError(t, newAfter.err)
	require.ErrorContains(t, bad["same token"].rejected, "tokenHash is the current token's")
	require.ErrorContains(t, bad["bad hash"].rejected, "tokenHash is not a lower-case hex SHA-256")
	require.ErrorContains(t, bad["bad key"].rejected, "reportKey is not a base64url Ed25519 public key")
	require.ErrorContains(t, bad["no reason"].rejected, "reason is empty")
}

func TestClusterAgentOutOfSyncFreezesButCannotUnfreeze(t *testing.T) {
	env, rec := newTestCluster(t)
	tok := mint(t)
	// The watcher samples fine every 30s throughout.
	for at := time.Second; at < 6*time.Minute; at += 30 * time.Second {
		env.RegisterDelayedCallback(func() { watcherSees(env, true, "") }, at)
	}
	env.RegisterDelayedCallback(registerPoolsFn(env), 2*time.Second)
	report := func(sync contract.SyncState) func() {
		return func() {
			callUpdate(env, contract.UpdateReportObserved, signed(t, tok.Token, agentReport(env.Now(), sync)))
		}
	}
	env.RegisterDelayedCallback(report(contract.SyncSyncing), 10*time.Second)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, false, env.Now().Add(-time.Second))
		st := clusterStatus(t, env)
		require.Equal(t, `cluster agent reports sync state "syncing"`, st.Frozen)
		require.Equal(t, contract.SyncSyncing, st.Observed.SyncState)
	}, 11*time.Second)
	env.RegisterDelayedCallback(report(contract.SyncConnected), 20*time.Second)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, true, env.Now().Add(-time.Second))
	}, 21*time.Second)
	// The agent says syncing, then falls silent: once its report is older
	// than StaleAfter (2m) it no longer counts, and the watcher rules.
	env.RegisterDelayedCallback(report(contract.SyncSyncing), 30*time.Second)
	env.RegisterDelayedCallback(func() {
		requireEveryPoolHeard(t, rec, contract.PhaseActive, true, env.Now().Add(-time.Second))
		require.Empty(t, clusterStatus(t, env).Frozen)
	}, 2*time.Minute+31*time.Second)
	// The watcher loses the cluster; an agent saying "connected" does not
	// reopen the gate.
	env.RegisterDelayedCallback(func() { watcherSees(env, false, "connection refused") }, 3*time.Minute+5*time.Second)
	env.RegisterDelayedCallback(report(contract.SyncConnected), 3*time.Minute+6*time.Second)
	env.RegisterDelayedCallback(func() {
		st := clusterStatus(t, env)
		require.False(t, st.Observed.Reachable)
		require.Equal(t, "cluster unreachable: connection refused", st.Frozen)
		for _, g := range rec.lastGates() {
			require.False(t, g.gate.Reachable)
		}
	}, 3*time.Minute+7*time.Second)
	endCluster(env, 3*time.Minute+10*time.Second)
	runEnrolled(t, env, tok)
	requireCanceled(t, env)
}

func registerPoolsFn(env *testsuite.TestWorkflowEnvironment) func() {
	return func() { registerPools(env) }
}

func TestClusterContinueAsNewKeepsTokenPoolsAndObservations(t *testing.T) {
	env, _ := newTestCluster(t)
	tok := mint(t)
	var reportedAt time.Time
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		reportedAt = env.Now()
		callUpdate(env, contract.UpdateReportObserved, signed(t, tok.Token, agentReport(reportedAt, contract.SyncConnected)))
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SetContinueAsNewSuggested(true)
		watcherSees(env, true, "")
	}, 10*time.Second)
	runEnrolled(t, env, tok)
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next ClusterInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	s := next.State
	require.NotNil(t, s)
	require.Len(t, s.Pools, len(clusterPools))
	require.Equal(t, tok.Hash, s.TokenHash)
	require.Equal(t, tok.ReportKey, s.ReportKey)
	require.WithinDuration(t, reportedAt, s.AgentReportedAt, 0, "the replay bound was lost")
	require.Equal(t, contract.PhaseActive, s.Gate.Phase)
	require.True(t, s.Gate.Reachable)
	require.Equal(t, 12, s.Observed.Nodes)
}
