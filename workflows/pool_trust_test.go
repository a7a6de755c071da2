package workflows

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// These tests run the pool against the world's provider: a target, the
// nodes that joined and the machines still booting.

func TestUnsatisfiablePodBuysNothingForAnHour(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("nofit-db", env.Now().Add(-time.Hour)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.Unplaceable["default/nofit-db"], "nodeSelector disktype=nvme: no size in this pool has that label")
	}, 2*time.Minute)
	finish(env, time.Hour)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, w.provisions, "a pod no size can hold bought nodes")
}

func TestSlowBootOnePodBuysOneNodeAcrossContinueAsNew(t *testing.T) {
	p := types.DefaultPolicy()
	p.ScaleUpCooldown = types.Duration(time.Minute)
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now().Add(-2*time.Minute)))
	}, time.Second)
	// The machine takes 12 minutes to boot, far past the cooldown, with
	// observations arriving meanwhile and the server asking for a new run.
	for i := 1; i <= 10; i++ {
		env.RegisterDelayedCallback(w.signal, time.Duration(i)*time.Minute)
	}
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true); w.signal() }, 11*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	require.Len(t, w.provisions, 1, "one pod bought more than one node while its node booted")

	// The next run carries the booting machine in its provider view and
	// still buys nothing more for the pod.
	var next PoolInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.State.Provider, "provider view lost at Continue-As-New")
	env2, w2 := newTestPool(t, p, busyNodes())
	w2.target, w2.pods, w2.launchedAt = 3, w.pods, env2.Now().Add(-11*time.Minute)
	for i := 1; i <= 3; i++ {
		env2.RegisterDelayedCallback(w2.signal, time.Duration(i)*time.Minute)
	}
	finish(env2, 3*time.Minute+30*time.Second)
	env2.ExecuteWorkflow(PoolWorkflow, next)
	require.NoError(t, env2.GetWorkflowError())
	require.Empty(t, w2.provisions, "the new run bought again for a pod whose node is booting")
}

func TestMixedGPUAndCPUPodsAreSizedInConsecutiveDecisions(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("gpu-train", env.Now().Add(-2*time.Minute)), pending("web", env.Now().Add(-2*time.Minute)))
	}, time.Second)
	finish(env, 30*time.Second)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 2, "the GPU pod waited for a cooldown (or forever)")
	require.Equal(t, "sim-4c8g", w.provisions[0].Size)
	require.Equal(t, "sim-gpu", w.provisions[1].Size)
}

func TestStaleObservationAfterDeleteDoesNotMoveTheTarget(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 2
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.1, 0.1)}
	env, w := newTestPool(t, p, nodes)
	// The pool holds an observation from 9m50s; another is sampled at
	// 9m55s, before n3 is removed at 10m, and arrives only at 12m.
	var before types.PoolObservation
	env.RegisterDelayedCallback(w.signal, 9*time.Minute+50*time.Second)
	env.RegisterDelayedCallback(func() { before = w.observation() }, 9*time.Minute+55*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"n3"}, w.deleted, "idle node not removed")
		// An observation sampled before the delete arrives after it.
		env.SignalWorkflow(contract.SignalObserve, before)
	}, 12*time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 2, st.TargetNodes, "a stale observation moved the target")
		require.Equal(t, 2, st.Nodes, "a stale observation brought the removed node back")
		require.Equal(t, 0, st.InFlight)
	}, 12*time.Minute+time.Second)
	finish(env, 13*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, before.Nodes, 3, "the late observation did hold the removed node")
}

func TestMachineThatNeverJoinsIsDeletedAndItsSizeBackedOff(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now().Add(-2*time.Minute)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1)
		require.Empty(t, w.deleted, "deleted before the provision timeout")
	}, 15*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"boot-2"}, w.deleted, "a machine that never joined was kept past the provision timeout")
		st := status(t, env)
		require.Contains(t, st.SizeBackoff, "sim-4c8g")
		require.NotEmpty(t, st.Repairs)
		require.Contains(t, st.Repairs[len(st.Repairs)-1], "never registered as a node within provisionTimeout 15m0s")
	}, 21*time.Minute)
	finish(env, 22*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	// The pod is still pending: the next plan excluded the backed-off size.
	last := w.plans[len(w.plans)-1]
	require.Contains(t, last.ExcludeSizes, "sim-4c8g")
}

func TestNodeNotReadyTooLongIsReplaced(t *testing.T) {
	p := types.DefaultPolicy()
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.8, 0.8)}
	env, w := newTestPool(t, p, nodes)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes[2].State = types.NodeNotReady
		w.mu.Unlock()
		w.signal()
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.deleted, "replaced before the unready timeout")
	}, 20*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"n3"}, w.deleted)
		require.Contains(t, w.drained, "n3", "not drained before deletion")
		require.Len(t, w.provisions, 1, "not replaced")
		require.Equal(t, 3, w.provisions[0].Target, "replacement restores the group's target")
	}, 27*time.Minute)
	finish(env, 28*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestMassUnreadinessFreezesRepair(t *testing.T) {
	p := types.DefaultPolicy()
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.8, 0.8)}
	env, w := newTestPool(t, p, nodes)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes[1].State, w.nodes[2].State = types.NodeNotReady, types.NodeNotReady
		w.mu.Unlock()
		w.signal()
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.Frozen, "2 of 3 nodes are unready")
		require.Empty(t, w.deleted, "a mass failure was answered by deleting nodes")
	}, 30*time.Minute)
	finish(env, 31*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestScaleUpThatDidNotHelpBuysNothingMore(t *testing.T) {
	p := types.DefaultPolicy()
	p.ScaleUpCooldown = types.Duration(time.Minute)
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("picky", env.Now().Add(-2*time.Minute)))
	}, time.Second)
	// The node bought for it joins and is Ready, but the pod stays pending.
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		n := node("n3", 0, 0)
		n.CreatedAt = env.Now()
		w.nodes = append(w.nodes, n)
		w.mu.Unlock()
		w.signal()
	}, 2*time.Minute)
	for i := 3; i <= 20; i++ {
		env.RegisterDelayedCallback(w.signal, time.Duration(i)*time.Minute)
	}
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.NoHelp["default/picky"], "scale-up did not help: node n3")
	}, 10*time.Minute)
	finish(env, 21*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1, "bought again for a pod a new Ready node did not help")
}

func TestRunawayGuardStopsBuyingWithoutProgress(t *testing.T) {
	p := types.DefaultPolicy()
	p.ScaleUpCooldown = types.Duration(time.Minute)
	p.MaxNodesWithoutProgress = 2
	env, w := newTestPool(t, p, busyNodes())
	// A new pod every two minutes, each bought for and none ever scheduled
	// (their nodes never join, so no-help cannot judge them).
	for i := 0; i < 6; i++ {
		i := i
		env.RegisterDelayedCallback(func() {
			w.mu.Lock()
			w.pods = append(w.pods, pending(fmt.Sprintf("p%d", i), env.Now().Add(-2*time.Minute)))
			w.mu.Unlock()
			w.signal()
		}, time.Duration(1+2*i)*time.Minute)
	}
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 2, st.AddedWithoutProgress)
		require.True(t, strings.Contains(strings.Join(st.Blocked, "\n"), "runaway guard: 2 nodes added"), "blocked: %v", st.Blocked)
	}, 13*time.Minute)
	finish(env, 14*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 2, "the runaway guard let the pool keep buying")
}

func TestProtectedIdleNodeDoesNotStarveTheOthers(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.ScaleDownCooldown = types.Duration(time.Minute)
	protected := node("n1", 0.1, 0.1)
	protected.DrainBlockers = []string{"pod default/db: cluster-autoscaler.kubernetes.io/safe-to-evict=false"}
	nodes := []types.NodeObservation{protected, node("n2", 0.1, 0.1), node("n3", 0, 0), node("n4", 0.8, 0.8)}
	env, w := newTestPool(t, p, nodes)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.NotEmpty(t, st.SkippedNodes)
		require.Contains(t, st.SkippedNodes[0], "n1 cannot be emptied: pod default/db")
	}, 11*time.Minute)
	finish(env, 20*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"n3", "n2"}, w.deleted[:2], "empty node first, then the other idle one; the protected one never")
	require.NotContains(t, w.deleted[:2], "n1")
}

func TestLeakedMachineIsCollectedAfterTheGracePeriod(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	w.leaked = []activities.MachineState{{ID: "i-leak", Name: "leak-1", State: connectors.InstanceRunning, CreatedAt: env.Now()}}
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.collected, "a young leak may be a launch still being filed")
	}, 14*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"i-leak"}, w.collected)
		st := status(t, env)
		require.Contains(t, st.Repairs[len(st.Repairs)-1], "collected leaked machines i-leak")
	}, 21*time.Minute)
	finish(env, 22*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

// A pool workflow started under one pool's ID with another pool's spec (a
// tenant may start only its own org's pool IDs, but chooses the input)
// fails at once and never touches the other pool's provider.
func TestPoolRunsOnlyUnderItsOwnID(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	other := key()
	other.Org = "globex"
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "pool/acme/web/api/sim/east-decoy"})
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: contract.PoolSpec{Key: other, Policy: types.DefaultPolicy()}})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.ErrorContains(t, err, "pool spec is for pool/globex/web/api/sim/east, but this workflow is pool/acme/web/api/sim/east-decoy")
	require.Zero(t, w.reads, "the provider was read for another pool")
	require.Empty(t, w.provisions)
}

// A start that carries a pool state (a tenant may start its own pool with
// any input) is not a continue-as-new: the state is ignored, so a metering
// cursor in the future cannot skip billing and a policy that never passed
// set-policy cannot take effect.
func TestAFreshStartIgnoresCarriedState(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	crafted := poolcore.New(spec(p))
	crafted.MeterCursor = env.Now().Add(365 * 24 * time.Hour).Truncate(time.Hour)
	crafted.Policy.MaxNodes = 1_000_000
	crafted.Policy.PendingThreshold = 0
	crafted.Seq = 41
	var st contract.PoolStatus
	env.RegisterDelayedCallback(func() { st = status(t, env) }, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("a", env.Now().Add(-time.Hour)))
	}, 20*time.Second)
	finish(env, 5*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p), State: crafted})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, p.MaxNodes, st.Policy.MaxNodes, "the spec's policy, not the carried one")
	require.False(t, st.MeteredThrough.After(env.Now()), "metering starts now, not at a cursor a year ahead: %s", st.MeteredThrough)
	require.NotEmpty(t, st.Decisions)
	require.Equal(t, "start", st.Decisions[0].Action)
	require.Equal(t, int64(1), st.Decisions[0].Seq, "decisions count from 1, not from the carried 41")
	require.Contains(t, st.Decisions[0].Outcome, "carried state ignored")
	require.NotEmpty(t, w.provisions, "the pool still scales from its spec")
}

// A pool that names another org's tenant queue would have that org's own
// worker buy nodes for it in that org's cloud account: it fails at once.
func TestPoolRefusesAnotherOrgsTenantQueue(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	sp := spec(types.DefaultPolicy())
	sp.ProviderTaskQueue = "tenant-globex"
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: sp})
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), `providerTaskQueue "tenant-globex" is another org's tenant queue`)
	require.Zero(t, w.reads, "the provider was read through another org's worker")
	require.Empty(t, w.provisions)
}

// The real scheduler's anti-affinity case: four pods that repel each other
// by hostname, a node bought for each of three; kube-scheduler bound the
// fourth (not yet bought for) to one of them, so a bought-for pod waits
// beside nodes that have room and each run a sibling. Its rules, not room,
// refuse it there, and a new node admits it: it buys again, where an empty
// roomy node (TestScaleUpThatDidNotHelpBuysNothingMore) means no help.
func TestAPodRepelledByItsSiblingBuysAgain(t *testing.T) {
	p := types.DefaultPolicy()
	p.ScaleUpCooldown = types.Duration(time.Minute)
	env, w := newTestPool(t, p, busyNodes())
	solo := pending("solo", env.Now().Add(-2*time.Minute))
	solo.Scheduling = &types.PodScheduling{AntiAffinity: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}}}}}
	env.RegisterDelayedCallback(func() { w.setPods(solo) }, time.Second)
	// The node bought for it joins, Ready, and runs a sibling.
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		n := node("n3", 0.1, 0.1)
		n.CreatedAt = env.Now()
		w.nodes = append(w.nodes, n)
		w.mu.Unlock()
		w.signal()
	}, 2*time.Minute)
	for i := 3; i <= 8; i++ {
		env.RegisterDelayedCallback(w.signal, time.Duration(i)*time.Minute)
	}
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Empty(t, st.NoHelp, "a pod its sibling repelled was judged not helped")
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 2, "the repelled pod did not buy again")
	}, 8*time.Minute)
	finish(env, 9*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}
