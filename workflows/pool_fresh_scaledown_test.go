package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/types"
)

// n3 is idle from the start; 30 s before its idle window ends the pool
// hears the world once more, then n1 and n2 fill up and n3 takes a pod,
// all below the lines the watcher signals on (n3 stays idle, n1 and n2
// busy). When the window ends the pool's last look says n3's pods fit on
// n1 and n2. With the fresh scale-down rule the pool looks again first
// and keeps n3; a run begun before it acts on the 30 s old look, as the
// old bound (two sample intervals) allows, and drains n3 onto room that
// is gone.
func TestPoolScaleDownLooksAgainOnAnOlderObservation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		old     bool
		removed bool
	}{{"with the rule", false, false}, {"a run begun before it", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := types.DefaultPolicy()
			env, w := newTestPool(t, p, []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.1, 0.1)})
			if tc.old {
				env.OnGetVersion(changeFreshScaleDown, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			env.RegisterDelayedCallback(w.signal, 9*time.Minute+30*time.Second)
			env.RegisterDelayedCallback(func() {
				w.mu.Lock()
				w.setNodesLocked([]types.NodeObservation{node("n1", 0.95, 0.8), node("n2", 0.95, 0.8), node("n3", 0.25, 0.1)})
				w.mu.Unlock()
			}, 9*time.Minute+45*time.Second)
			env.RegisterDelayedCallback(func() {
				if tc.removed {
					require.Equal(t, []string{"n3"}, w.deleted, "the old bound acts on the 30 s old look")
				} else {
					require.Empty(t, w.deleted, "removed on a 30 s old look")
				}
			}, 11*time.Minute)
			finish(env, 12*time.Minute)
			env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
			require.NoError(t, env.GetWorkflowError())
		})
	}
}
