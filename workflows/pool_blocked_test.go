package workflows

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// blockedEvents counts the DisruptionBlocked Events told on each node.
func blockedEvents(w *world) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, e := range w.events {
		if e.Reason == connectors.EventDisruptionBlocked && e.Kind == connectors.EventKindNode {
			out[e.Name]++
		}
	}
	return out
}

// watch signals an observation every sample interval until until.
func watch(env interface {
	RegisterDelayedCallback(func(), time.Duration)
}, w *world, every, until time.Duration) {
	for at := every; at < until; at += every {
		env.RegisterDelayedCallback(w.signal, at)
	}
}

// A PodDisruptionBudget that allows nothing refuses the drain of an idle
// node: within one sample interval of the refusal status.drainBlocked
// names the pod and the budget, one DisruptionBlocked Event is told
// however often the pool retries (with a backoff), and the node goes at
// the first retry after the budget allows a disruption, without a fresh
// idle window.
func TestDrainBlockedByAPDBIsShownAndRetried(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.05, 0.05)}
	nodes[1].LargestPod = types.Resources{MilliCPU: 200, Memory: types.GiB / 2}
	nodes[1].Requested.Pods = 1
	env, w := newTestPool(t, p, nodes)
	var mu sync.Mutex
	allows := false
	w.drainErr = func(in activities.DrainInput) error {
		mu.Lock()
		defer mu.Unlock()
		if in.Node == "n2" && !allows {
			return errors.New("drain refused: web/a: its PodDisruptionBudget allows no disruption now (The disruption budget web needs 1 healthy pods and has 1 currently)")
		}
		return nil
	}
	watch(env, w, 30*time.Second, 20*time.Minute)
	var refusedAt time.Time
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		tried := len(w.drained)
		w.mu.Unlock()
		require.Positive(t, tried, "no drain tried within consolidateAfter and a sample")
		st := status(t, env)
		why := st.DrainBlocked["n2"]
		require.Contains(t, why, "web/a", "status.drainBlocked does not name the pod: %v", st.DrainBlocked)
		require.Contains(t, why, "PodDisruptionBudget", "status.drainBlocked does not name the rule: %v", st.DrainBlocked)
		require.Contains(t, why, "drained again after")
		// The server numbers each attempt's events anew: a reason that
		// carried them would be a new reason, and a new Event, per retry.
		require.NotContains(t, why, "scheduledEventID", "the refusal carries the attempt's event IDs")
		require.Equal(t, 1, blockedEvents(w)["n2"], "the node was not told once: %v", w.events)
		refusedAt = env.Now()
	}, 2*time.Minute+time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		tried := len(w.drained)
		w.mu.Unlock()
		require.GreaterOrEqual(t, tried, 3, "the refused drain was not retried with a backoff")
		require.Equal(t, 1, blockedEvents(w)["n2"], "one Event per retry, not one per reason")
		require.Empty(t, w.deleted)
		mu.Lock()
		allows = true
		mu.Unlock()
	}, 10*time.Minute)
	var deletedAt time.Time
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Equal(t, []string{"n2"}, w.deleted, "the node stayed after its budget allowed a disruption")
		deletedAt = w.deletedAt["n2"]
	}, 10*time.Minute+poolcore.MaxRetrySamples*p.SampleInterval.D()+time.Second)
	finish(env, 13*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.False(t, refusedAt.IsZero())
	require.False(t, deletedAt.IsZero())
}

// Each kind of drain blocker the observer reports keeps its idle node and
// is said within one sample interval: status.drainBlocked names the pod
// and the rule, and the node gets one DisruptionBlocked Event.
func TestDrainBlockersAreShownPerKind(t *testing.T) {
	blockers := map[string]string{
		"safe":     "pod web/a: cluster-autoscaler.kubernetes.io/safe-to-evict=false",
		"disrupt":  "pod web/b: karpenter.sh/do-not-disrupt=true",
		"stranded": "pod web/c: no other node of the pool admits it (node selector, node affinity, taints or hostname anti-affinity)",
		"orphan":   "pod web/d: unreplicated (no controller would recreate it)",
	}
	for name, blocker := range blockers {
		t.Run(name, func(t *testing.T) {
			p := types.DefaultPolicy()
			p.MinNodes = 1
			nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.05, 0.05)}
			nodes[1].DrainBlockers = []string{blocker}
			env, w := newTestPool(t, p, nodes)
			watch(env, w, 30*time.Second, 15*time.Minute)
			env.RegisterDelayedCallback(func() {
				st := status(t, env)
				require.Equal(t, "cannot be emptied: "+blocker, st.DrainBlocked["n2"], "status.drainBlocked is silent: %v", st.DrainBlocked)
				require.Equal(t, 1, blockedEvents(w)["n2"])
			}, 31*time.Second)
			env.RegisterDelayedCallback(func() {
				require.Equal(t, 1, blockedEvents(w)["n2"], "told more than once")
				require.Empty(t, w.drained, "a node that cannot be emptied was drained")
				w.mu.Lock()
				w.nodes[1].DrainBlockers = nil
				w.mu.Unlock()
			}, 12*time.Minute)
			env.RegisterDelayedCallback(func() {
				require.Equal(t, []string{"n2"}, w.deleted, "the node stayed once its blocker went")
			}, 12*time.Minute+31*time.Second)
			finish(env, 13*time.Minute)
			env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
			require.NoError(t, env.GetWorkflowError())
		})
	}
}

// A disruption window and the disruption budget keep idle nodes too, and
// say so in status.drainBlocked with the rule and until when.
func TestDrainBlockedNamesTheBudgetAndTheWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*types.Policy, []types.NodeObservation)
		want string
	}{
		{"window", func(p *types.Policy, _ []types.NodeObservation) {
			p.Disruption = &types.DisruptionBudget{Windows: []types.DisruptionWindow{{Name: "day", Schedule: "0 0 * * *", TimeZone: "UTC", Duration: types.Duration(23 * time.Hour), ScaleDown: types.ScaleDownForbidden}}}
		}, "kept by the disruption window (scale-down forbidden by"},
		{"budget", func(p *types.Policy, nodes []types.NodeObservation) {
			p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 1}
			nodes[0].State = types.NodeCordoned // someone else's drain
		}, "kept by the disruption budget (1 draining at once)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := types.DefaultPolicy()
			p.MinNodes = 1
			nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0, 0)}
			tc.edit(&p, nodes)
			env, w := newTestPool(t, p, nodes)
			env.SetStartTime(time.Date(2027, 3, 1, 1, 0, 0, 0, time.UTC))
			watch(env, w, 30*time.Second, 12*time.Minute)
			env.RegisterDelayedCallback(func() {
				st := status(t, env)
				require.Contains(t, st.DrainBlocked["n3"], tc.want, "status.drainBlocked: %v", st.DrainBlocked)
				require.Equal(t, 1, blockedEvents(w)["n3"])
				require.Empty(t, w.deleted)
			}, p.IdleWindow.D()+31*time.Second)
			finish(env, 12*time.Minute)
			env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
			require.NoError(t, env.GetWorkflowError())
		})
	}
}

// A run recorded before drain-blocked tells an Event per failed drain
// and waits a whole idle window between drains.
func TestDrainBlockedOnlyFromItsChangeID(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	env, w := newTestPool(t, p, []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0, 0)})
	env.OnGetVersion(changeDrainBlocked, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	w.drainErr = func(activities.DrainInput) error { return errors.New("drain refused") }
	watch(env, w, 30*time.Second, 9*time.Minute)
	var drained []string // before deregistering drains what is left
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		drained = append(drained, w.drained...)
	}, 9*time.Minute-time.Second)
	finish(env, 9*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	tries := 0
	for _, n := range drained {
		if n == "n2" {
			tries++
		}
	}
	// One decision's drain, its activity attempts included.
	require.Positive(t, tries)
	require.LessOrEqual(t, tries, 3, "retried before a whole idle window: %v", drained)
}

// REASON names a kept idle node when no rule of the law does.
func TestReasonLineNamesAKeptIdleNode(t *testing.T) {
	now := t0.Add(time.Hour)
	p := &pool{state: poolcore.New(spec(types.DefaultPolicy())), rules: poolcore.AllRules()}
	p.state.EnsureMaps()
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.05, 0.05)}
	nodes[2].DrainBlockers = []string{"pod web/a: karpenter.sh/do-not-disrupt=true"}
	p.state.Observation = obs(now, nodes)
	p.state.IdleSince["n3"] = now.Add(-time.Hour)
	p.last = p.decide(now)
	if got := (publisher{p}).reasonLine(); !strings.Contains(got, "n3 cannot be emptied: pod web/a: karpenter.sh/do-not-disrupt=true") {
		t.Fatalf("REASON %q does not name the kept node", got)
	}
	if !strings.Contains((publisher{p}).details(), "kept idle: n3: cannot be emptied") {
		t.Fatalf("the Web UI's details do not name the kept node:\n%s", publisher{p}.details())
	}
}
