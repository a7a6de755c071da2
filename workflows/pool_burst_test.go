package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/types"
)

// A burst's backlog: kube-scheduler has not tried the pod since the node
// bought for it became Ready, so the pod was not refused by that node and
// is not judged not helped, however long the grace has passed. Once a
// try after the node is on record and the pod is still pending beside
// its room, it is.
func TestAPodNotTriedSinceItsNodeWasReadyIsNotJudgedNotHelped(t *testing.T) {
	p := types.DefaultPolicy()
	p.ScaleUpCooldown = types.Duration(time.Minute)
	env, w := newTestPool(t, p, busyNodes())
	var since, joined time.Time
	env.RegisterDelayedCallback(func() {
		since = env.Now().Add(-2 * time.Minute)
		pod := pending("picky", since)
		pod.TriedAt = since
		w.setPods(pod)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		joined = env.Now()
		w.mu.Lock()
		n := node("n3", 0, 0)
		n.CreatedAt = joined
		w.nodes = append(w.nodes, n)
		w.mu.Unlock()
		w.signal()
	}, 2*time.Minute)
	for i := 3; i <= 20; i++ {
		env.RegisterDelayedCallback(w.signal, time.Duration(i)*time.Minute)
	}
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Empty(t, st.NoHelp, "judged refused before the scheduler tried it with the node there")
		require.Len(t, w.provisions, 1, "bought again while the node bought for it waits for the scheduler")
		// The scheduler tries it now, with the node there, and refuses.
		w.mu.Lock()
		w.pods[0].TriedAt = env.Now()
		w.mu.Unlock()
		w.signal()
	}, 10*time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.NoHelp["default/picky"], "scale-up did not help: node n3")
	}, 15*time.Minute)
	finish(env, 21*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1, "bought again for a pod a new Ready node did not help")
}

// The runaway guard waits for a pod scheduled onto a new node, and a new
// node that runs pods is that, whichever pods the scheduler put there: in
// a burst it fills new nodes from its backlog in its own order, and the
// very pods a purchase was for may bind minutes later. Runs recorded
// before the change keep counting only the pods bought for.
func TestNewNodesThatRunPodsAreProgressForTheRunawayGuard(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version workflow.Version
		buys    func(t *testing.T, n int)
	}{
		{"tried-since-ready", 1, func(t *testing.T, n int) { require.Greater(t, n, 2, "the guard stopped a pool whose new nodes fill") }},
		{"before the change", workflow.DefaultVersion, func(t *testing.T, n int) { require.Equal(t, 2, n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := types.DefaultPolicy()
			p.ScaleUpCooldown = types.Duration(time.Minute)
			p.MaxNodesWithoutProgress = 2
			env, w := newTestPool(t, p, busyNodes())
			env.OnGetVersion(changeTriedSinceReady, workflow.DefaultVersion, 1).Return(tc.version)
			// A new pod every two minutes, each bought for; each bought
			// node joins and fills with other pods of the backlog, and the
			// pods bought for stay pending.
			for i := 0; i < 6; i++ {
				env.RegisterDelayedCallback(func() {
					w.mu.Lock()
					w.pods = append(w.pods, pending(fmt.Sprintf("p%d", i), env.Now().Add(-2*time.Minute)))
					w.mu.Unlock()
					w.signal()
				}, time.Duration(1+2*i)*time.Minute)
				env.RegisterDelayedCallback(func() {
					w.mu.Lock()
					if len(w.provisions) > len(w.nodes)-2 {
						n := node(fmt.Sprintf("new-%d", i), 0.9, 0.9)
						n.CreatedAt = env.Now()
						w.nodes = append(w.nodes, n)
					}
					w.mu.Unlock()
					w.signal()
				}, time.Duration(2+2*i)*time.Minute)
			}
			finish(env, 14*time.Minute)
			env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
			require.NoError(t, env.GetWorkflowError())
			tc.buys(t, len(w.provisions))
		})
	}
}
