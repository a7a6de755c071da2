package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// trusted is a platform with one issuer and one worker system key, and
// callers for two orgs.
type trusted struct {
	trust          auth.Trust
	system         auth.SigningKey
	alice, mallory auth.Credential
}

func newTrusted(t *testing.T, now time.Time) trusted {
	issuer, err := auth.GenerateIssuer("issuer-1")
	require.NoError(t, err)
	sys, err := auth.GenerateSystemKey("worker-1")
	require.NoError(t, err)
	tr := trusted{system: sys, trust: auth.Trust{Issuers: map[string]string{issuer.Kid: issuer.Public()}, System: map[string]string{sys.Kid: sys.Public()}}}
	tr.alice, err = auth.NewCredential(issuer, "alice@acme", []string{"acme"}, time.Hour, now)
	require.NoError(t, err)
	tr.mallory, err = auth.NewCredential(issuer, "mallory@globex", []string{"globex"}, time.Hour, now)
	require.NoError(t, err)
	return tr
}

func (tr trusted) signScale(t *testing.T, cred auth.Credential, message string, req contract.ScaleRequest, now time.Time) contract.ScaleRequest {
	a, err := auth.SignRequest(cred, key().WorkflowID(), message, req, now)
	require.NoError(t, err)
	req.Auth = &a
	return req
}

func (tr trusted) signObservation(t *testing.T, obs types.PoolObservation, now time.Time) types.PoolObservation {
	s, err := auth.SignSystemValue(tr.system, key().WorkflowID(), contract.SignalObserve, obs, now)
	require.NoError(t, err)
	obs.Auth = &s
	return obs
}

func TestOnlyTheRightCallersMoveAPool(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	tr := newTrusted(t, env.Now())
	UseTrust(&tr.trust)
	defer UseTrust(nil)
	env.OnActivity(a.Trust, mock.Anything).Return(tr.trust, nil)
	env.OnActivity(a.ReadClusterGate, mock.Anything, mock.Anything).Return(func(context.Context, string) (contract.ClusterGate, error) {
		return contract.ClusterGate{Phase: contract.PhaseDisabled, Reachable: true, Since: env.Now()}, nil
	})
	refused := map[string]string{}
	cb := func(name string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{OnReject: func(err error) { refused[name] = err.Error() },
			OnAccept: func() { t.Errorf("%s accepted", name) }, OnComplete: func(any, error) {}}
	}
	var replay contract.ScaleRequest
	env.RegisterDelayedCallback(func() {
		now := env.Now()
		env.SignalWorkflow(contract.SignalObserve, tr.signObservation(t, w.observation(), now))
		env.UpdateWorkflow(contract.UpdateScale, "unsigned", cb("unsigned"), contract.ScaleRequest{Target: 4, Reason: "x"})
		env.UpdateWorkflow(contract.UpdateScale, "other-org", cb("other-org"), tr.signScale(t, tr.mallory, contract.UpdateScale, contract.ScaleRequest{Target: 4, Reason: "x"}, now))
		wrongMessage := tr.signScale(t, tr.alice, contract.UpdatePause, contract.ScaleRequest{Target: 4, Reason: "x"}, now)
		env.UpdateWorkflow(contract.UpdateScale, "wrong-message", cb("wrong-message"), wrongMessage)
		tampered := tr.signScale(t, tr.alice, contract.UpdateScale, contract.ScaleRequest{Target: 3, Reason: "x"}, now)
		tampered.Target = 40
		env.UpdateWorkflow(contract.UpdateScale, "tampered", cb("tampered"), tampered)
		// A tenant may not lift its own org's ceiling.
		lifted := contract.SetPolicyRequest{Policy: p}
		lifted.OrgLimits = &types.OrgPolicy{Org: "acme", MaxNodes: 1000}
		la, err := auth.SignRequest(tr.alice, key().WorkflowID(), contract.UpdateSetPolicy, lifted, now)
		require.NoError(t, err)
		lifted.Auth = &la
		env.UpdateWorkflow(contract.UpdateSetPolicy, "org-limits", cb("org-limits"), lifted)
		replay = tr.signScale(t, tr.alice, contract.UpdateScale, contract.ScaleRequest{Target: 3, Reason: "launch", RequestedBy: "not-alice"}, now)
		env.UpdateWorkflow(contract.UpdateScale, "ok", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("alice's scale refused: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, replay)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateScale, "replayed", cb("replayed"), replay)
		// Forged signals: an unsigned force-scale, another org's, an
		// unsigned observation with fake pending pods, a gate saying active.
		env.SignalWorkflow(contract.SignalForceScale, contract.ScaleRequest{Target: 9, Reason: "forged"})
		env.SignalWorkflow(contract.SignalForceScale, tr.signScale(t, tr.mallory, contract.SignalForceScale, contract.ScaleRequest{Target: 9, Reason: "forged"}, env.Now()))
		fake := w.observation()
		fake.PendingPods = []types.PendingPod{pending("fake", env.Now().Add(-time.Hour))}
		env.SignalWorkflow(contract.SignalObserve, fake)
		env.SignalWorkflow(contract.SignalClusterGate, contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true, Since: env.Now()})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 2, st.Rejected["force-scale"], "%v", st.Rejected)
		require.Equal(t, 1, st.Rejected["observe"], "%v %s", st.Rejected, st.LastRejected)
		require.Equal(t, 0, st.PendingPods, "the forged observation was taken")
		require.Equal(t, contract.PhaseDisabled, st.Cluster.Phase, "the gate was taken from a forged signal, not read from the cluster")
		require.Equal(t, "alice@acme", st.Decisions[0].RequestedBy, "requestedBy is the verified subject, not free text")
	}, 20*time.Second)
	env.RegisterDelayedCallback(func() {
		req := contract.DeregisterRequest{Reason: "test over"}
		a, err := auth.SignRequest(tr.alice, key().WorkflowID(), contract.UpdateDeregister, req, env.Now())
		require.NoError(t, err)
		req.Auth = &a
		env.UpdateWorkflow(contract.UpdateDeregister, "finish", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("alice's deregister refused: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, req)
	}, time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Contains(t, refused["unsigned"], "carries no authorization")
	require.Contains(t, refused["other-org"], `caller "mallory@globex" may act for org globex, not for org "acme"`)
	require.Contains(t, refused["wrong-message"], "does not cover this request")
	require.Contains(t, refused["tampered"], "does not cover this request")
	require.Contains(t, refused["replayed"], "nonce was already used")
	require.Contains(t, refused["org-limits"], "orgLimits may be changed by a platform administrator only")
	require.Len(t, w.provisions, 1, "only alice's scale moved the pool")
	require.Equal(t, 3, w.provisions[0].Target)
}
