package workflows

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/types"
)

// idlePool is seven idle nodes under the written defaults, a floor of 2
// and a disruption budget of budget nodes draining at once. A drain takes
// 40s (the node observed cordoned meanwhile) and a deleted node's Node
// object is still observed, deleting, for 90s; the watcher samples every
// 30s.
func idlePool(t *testing.T, budget int) (types.Policy, *world, func(time.Duration) []string) {
	p := types.DefaultPolicy()
	p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: budget}
	var nodes []types.NodeObservation
	for i := 1; i <= 7; i++ {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), 0, 0))
	}
	env, w := newTestPool(t, p, nodes)
	w.drainTakes, w.lingerFor = 40*time.Second, 90*time.Second
	// run runs the pool until then and returns the nodes scale-down
	// removed (not the ones deregistering releases).
	run := func(until time.Duration) []string {
		for at := 30 * time.Second; at < until; at += 30 * time.Second {
			env.RegisterDelayedCallback(w.signal, at)
		}
		var removed []string
		env.RegisterDelayedCallback(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			removed = append(removed, w.deleted...)
		}, until-time.Second)
		finish(env, until)
		env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
		require.NoError(t, env.GetWorkflowError())
		return removed
	}
	return p, w, run
}

// TestBudgetPacesScaleDownToTheFloor: a budget of N nodes draining at once
// paces scale-down, never stops it: the idle nodes above the floor go in
// ceil(idle/N) drain cycles (a cycle: N drains and at most one sample
// interval), each as soon as the previous drain ended, never more than N
// draining at once.
func TestBudgetPacesScaleDownToTheFloor(t *testing.T) {
	for _, budget := range []int{1, 2} {
		t.Run(fmt.Sprintf("budget-%d", budget), func(t *testing.T) {
			p, w, run := idlePool(t, budget)
			removed := run(40 * time.Minute)
			require.Len(t, removed, 5, "the pool did not reach its floor of 2: removed %v", removed)
			require.LessOrEqual(t, w.maxDraining, budget, "more nodes draining at once than the budget allows")
			var at []time.Time
			for _, n := range removed {
				at = append(at, w.deletedAt[n])
			}
			sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
			firstDrain := at[0].Add(-w.drainTakes)
			cycles := (5 + budget - 1) / budget
			bound := time.Duration(cycles) * (time.Duration(budget)*w.drainTakes + p.SampleInterval.D())
			require.LessOrEqual(t, at[len(at)-1].Sub(firstDrain), bound,
				"the idle nodes took %s from the first drain to the floor, more than %d drain cycles (%s): removals at %v",
				at[len(at)-1].Sub(firstDrain), cycles, bound, at)
		})
	}
}

// TestBudgetPacesOnlyFromItsChangeID: a run recorded before the change
// keeps the cooldown after scale-down between the budget's drains.
func TestBudgetPacesOnlyFromItsChangeID(t *testing.T) {
	_, w, run := idlePool(t, 1)
	w.env.OnGetVersion(changeBudgetPaces, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	removed := run(8 * time.Minute)
	require.Less(t, len(removed), 5, "a run recorded before budget-paces reached the floor as fast: %v", removed)
}
