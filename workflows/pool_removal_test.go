package workflows

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
)

// TestScaleDownRemovesItsNodesAtOnce: without a disruption budget's cap,
// the five idle nodes above the floor drain together, so the pool reaches
// its floor in about one drain, not five after one another; while they
// drain, status.removing names the decision and the nodes in hand.
func TestScaleDownRemovesItsNodesAtOnce(t *testing.T) {
	_, w, run := idlePool(t, 0)
	var during contract.PoolStatus
	inHand := 0
	for at := 5 * time.Second; at < 12*time.Minute; at += 10 * time.Second {
		w.env.RegisterDelayedCallback(func() {
			st := status(t, w.env)
			if during.Removing == nil {
				during = st
			}
			if st.Removing != nil {
				inHand = max(inHand, len(st.Removing.InHand))
			}
		}, at)
	}
	removed := run(12 * time.Minute)
	require.Len(t, removed, 5, "the pool did not reach its floor of 2: removed %v", removed)
	require.Equal(t, 5, inHand, "the idle nodes were not in hand together")
	// The test environment runs each mocked drain in its own goroutine: on
	// a loaded machine one may start after another's delay has run out, so
	// the cluster side sees at least two cordoned at once, not always five.
	require.GreaterOrEqual(t, w.maxDraining, 2, "the idle nodes were not drained together")
	var at []time.Time
	for _, n := range removed {
		at = append(at, w.deletedAt[n])
	}
	spread := slices.MaxFunc(at, time.Time.Compare).Sub(slices.MinFunc(at, time.Time.Compare))
	require.Less(t, spread, w.drainTakes, "removals spread over %s: one after another", spread)
	require.NotNil(t, during.Removing, "status did not show the scale-down under way")
	require.Equal(t, 5, during.Removing.Nodes)
	require.Len(t, during.Removing.InHand, 5, "status.removing: %+v", during.Removing)
}

// TestScaleDownOneAtATimeBeforeItsChangeID: a run recorded before
// parallel-removal drains one node at a time.
func TestScaleDownOneAtATimeBeforeItsChangeID(t *testing.T) {
	_, w, run := idlePool(t, 0)
	w.env.OnGetVersion(changeParallelRemoval, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	removed := run(12 * time.Minute)
	require.NotEmpty(t, removed)
	require.Equal(t, 1, w.maxDraining, "a run recorded before parallel-removal drained nodes together")
}

// TestScaleDownStopsWhenTheRunMustContinueAsNew: a run whose history asks
// to continue as new starts no more removals (observations arriving
// during a long scale-down would outgrow the server's history limit, and
// the server ends such a run); it continues as new and the next run
// decides the rest.
func TestScaleDownStopsWhenTheRunMustContinueAsNew(t *testing.T) {
	p, w, _ := idlePool(t, 1)
	env := w.env
	// The first drain lengthens the history past the suggestion.
	w.drainErr = func(activities.DrainInput) error {
		env.SetContinueAsNewSuggested(true)
		return nil
	}
	for at := 30 * time.Second; at < 12*time.Minute; at += 30 * time.Second {
		env.RegisterDelayedCallback(w.signal, at)
	}
	finish(env, 12*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.True(t, workflow.IsContinueAsNewError(env.GetWorkflowError()), "the run did not continue as new: %v", env.GetWorkflowError())
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Len(t, w.deleted, 1, "the scale-down went on removing after the run was asked to continue as new: %v", w.deleted)
}
