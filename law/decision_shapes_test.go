package law

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

// A shape's unlisted pods are one counted entry, due when the oldest of
// them is; parked under the entry's key they buy nothing.
func TestOverdueSizesUnlistedPodsAsOneCountedEntry(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var pods []types.PendingPod
	for i := range 1000 {
		pods = append(pods, pending(fmt.Sprintf("p%04d", i), t0.Add(time.Duration(i)*100*time.Millisecond)))
	}
	o := types.PoolObservation{Pool: key(), ObservedAt: t0.Add(2 * time.Minute), PendingPods: pods}.SummarizePending(types.MaxListedPending, types.MaxPendingShapes)
	require.Len(t, o.PendingShapes, 1)
	shape := o.PendingShapes[0]
	in := DecisionInput{Policy: types.DefaultPolicy(), Observation: &o, Gate: OpenGate()}

	// Before the oldest unlisted pod is due: only listed pods are.
	in.Now = shape.UnlistedSince.Add(time.Minute - time.Second)
	due := overdue(in, nil)
	require.Equal(t, podCount(due), len(due), "no counted entry yet")
	// Once it is: every unlisted pod comes in one entry.
	in.Now = shape.UnlistedSince.Add(time.Minute)
	due = overdue(in, nil)
	entry := due[len(due)-1]
	require.Equal(t, types.UnlistedName(shape.Key), entry.Name)
	require.Equal(t, 500, entry.Count)
	require.Equal(t, 500+podCount(due[:len(due)-1]), podCount(due))
	// Bought for and booting: the entry still comes (booting room keeps
	// it from buying twice); a listed pod bought for does not.
	in.Awaiting = map[string]bool{entry.Key(): true, pods[0].Key(): true}
	due = overdue(in, nil)
	require.Equal(t, entry.Key(), due[len(due)-1].Key())
	require.NotEqual(t, pods[0].Key(), due[0].Key())
	// Parked as fitting no size: it buys nothing.
	in.Unplaceable = map[string]string{entry.Key(): "no size"}
	due = overdue(in, nil)
	require.NotEqual(t, entry.Key(), due[len(due)-1].Key())
}
