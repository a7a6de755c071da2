package workflows

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
)

// TestScaleDownRemovesItsNodesAtOnce: without a disruption budget's cap,
// the five idle nodes above the floor drain together, so the pool reaches
// its floor in about one drain, not five after one another; while they
// drain, status.removing names the decision and the nodes in hand.
func TestScaleDownRemovesItsNodesAtOnce(t *testing.T) {
	_, w, run := idlePool(t, 0)
	var during contract.PoolStatus
	for at := 5 * time.Second; at < 12*time.Minute; at += 10 * time.Second {
		w.env.RegisterDelayedCallback(func() {
			if during.Removing == nil {
				during = status(t, w.env)
			}
		}, at)
	}
	removed := run(12 * time.Minute)
	require.Len(t, removed, 5, "the pool did not reach its floor of 2: removed %v", removed)
	require.Equal(t, 5, w.maxDraining, "the idle nodes were not drained together")
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
