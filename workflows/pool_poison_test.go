package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// Each probe is what a caller with nothing but frontend access could send.
// Every one is refused and recorded, and the pool goes on acting.

func TestPoisonSignalsAreRecordedAndDropped(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.SignalObserve, "not an observation")
		env.SignalWorkflow(contract.SignalForceScale, []int{1, 2, 3})
		env.SignalWorkflow(contract.SignalClusterGate, 42)
		future := w.observation()
		future.ObservedAt = env.Now().Add(365 * 24 * time.Hour)
		future.PendingPods = []types.PendingPod{pending("forged", env.Now().Add(-time.Hour))}
		env.SignalWorkflow(contract.SignalObserve, future)
		env.SignalWorkflow(contract.SignalClusterGate, contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true, Since: env.Now().Add(time.Hour)})
		env.SignalWorkflow(contract.SignalForceScale, contract.ScaleRequest{Target: 5, Reason: strings.Repeat("x", 900<<10)})
		env.SignalWorkflow(contract.SignalForceScale, contract.ScaleRequest{Target: 5, Reason: "bell\x07"})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 2, st.Rejected["observe"], "undecodable and future observations: %v", st.Rejected)
		require.Equal(t, 3, st.Rejected["force-scale"], "%v", st.Rejected)
		require.Equal(t, 2, st.Rejected["cluster-gate"], "%v", st.Rejected)
		require.LessOrEqual(t, len(st.LastRejected), poolcore.MaxRejectionText)
		require.Empty(t, w.provisions, "a refused input moved the pool")
		require.Equal(t, 0, st.PendingPods, "the forged observation was taken")
		// A real observation after the forged future one is still taken.
		w.setPods(pending("real", env.Now().Add(-time.Hour)))
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "the pool stopped acting after the probes")
	}, time.Minute)
	finish(env, 2*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestUpdatesRefuseOversizeAndControlCharacters(t *testing.T) {
	p := types.DefaultPolicy()
	env, _ := newTestPool(t, p, busyNodes())
	refused := map[string]string{}
	cb := func(name string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{OnReject: func(err error) { refused[name] = err.Error() },
			OnAccept: func() { t.Errorf("%s accepted", name) }, OnComplete: func(any, error) {}}
	}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateScale, "big", cb("big"), contract.ScaleRequest{Target: 3, Reason: strings.Repeat("r", 2000)})
		env.UpdateWorkflow(contract.UpdateScale, "ctl", cb("ctl"), contract.ScaleRequest{Target: 3, Reason: "ok", RequestedBy: "ops\x1b[31m"})
		env.UpdateWorkflow(contract.UpdatePause, "pause", cb("pause"), contract.PauseRequest{Reason: strings.Repeat("p", 5000)})
		huge := p
		huge.SampleInterval, huge.ResyncInterval = types.Duration(2562047*time.Hour), types.Duration(2562047*time.Hour)
		env.UpdateWorkflow(contract.UpdateSetPolicy, "overflow", cb("overflow"), huge)
		many := p
		many.MaxNodes = 1e9
		env.UpdateWorkflow(contract.UpdateSetPolicy, "many", cb("many"), many)
	}, time.Second)
	finish(env, time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Contains(t, refused["big"], "reason is 2000 bytes, at most 1024")
	require.Contains(t, refused["ctl"], "requestedBy holds a control character")
	require.Contains(t, refused["pause"], "reason is 5000 bytes")
	require.Contains(t, refused["overflow"], "policy.sampleInterval: must be at most")
	require.Contains(t, refused["many"], "policy.maxNodes: must be at most 10000")
}

func TestContinueAsNewStateStaysBounded(t *testing.T) {
	p := types.DefaultPolicy()
	p.MaxNodes = 10000
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		// An observation far past every bound, and a flood of rejections.
		big := w.observation()
		for i := 0; i < 20000; i++ {
			big.PendingPods = append(big.PendingPods, pending(fmt.Sprintf("p-%05d", i), env.Now().Add(-time.Duration(i)*time.Second)))
		}
		env.SignalWorkflow(contract.SignalObserve, big)
		for i := 0; i < 200; i++ {
			env.SignalWorkflow(contract.SignalForceScale, contract.ScaleRequest{Target: 3, Reason: strings.Repeat("y", 2000)})
		}
		env.SetContinueAsNewSuggested(true)
		w.signal()
	}, time.Second)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next PoolInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	b, err := json.Marshal(next.State)
	require.NoError(t, err)
	require.Less(t, len(b), 1<<20, "state carried into Continue-As-New is %d bytes", len(b))
	require.LessOrEqual(t, len(next.State.BoughtFor), poolcore.MaxPendingKept)
	require.LessOrEqual(t, len(next.State.Decisions), poolcore.MaxDecisionsKept)
}
