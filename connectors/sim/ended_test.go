package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A terminated machine is reported in its group's Ended list with its
// creation and end, and kept in the Inventory's record after its group
// is gone: what the meter bills and what a test checks it against.
func TestEndedMachinesAreReportedAndRecorded(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	g := createGroup(t, f, testPool("web"), "sim-2c4g", 2, "k1")
	created := clock.Now()
	clock.Advance(65 * time.Second)
	gone := g.Instances[1]
	require.NoError(t, f.DeleteNodes(context.Background(), g.ID, []string{gone.Name}, "d1"))

	after := onlyGroup(t, f)
	require.Len(t, after.Instances, 1)
	require.Len(t, after.Ended, 1)
	e := after.Ended[0]
	assert.Equal(t, gone.ID, e.ID)
	assert.Equal(t, created, e.CreatedAt)
	assert.Equal(t, created.Add(65*time.Second), e.EndedAt)

	clock.Advance(time.Minute)
	require.NoError(t, f.DeleteNodeGroup(context.Background(), g.ID, "d2"))
	inv := f.Inventory()
	require.Empty(t, inv.Groups)
	require.Len(t, inv.Ended, 2)
	assert.Equal(t, gone.ID, inv.Ended[0].Instance.ID)
	assert.Equal(t, "sim-2c4g", inv.Ended[1].Size)
	assert.Equal(t, created.Add(125*time.Second), inv.Ended[1].Instance.EndedAt)
	assert.True(t, inv.EndedFrom.IsZero(), "nothing dropped")

	// The group's list keeps endedRetention only.
	g2 := createGroup(t, f, testPool("web"), "sim-2c4g", 1, "k2")
	require.NoError(t, f.SetTargetSize(context.Background(), g2.ID, 0, "s1"))
	clock.Advance(endedRetention + time.Minute)
	require.NoError(t, f.SetTargetSize(context.Background(), g2.ID, 1, "s2"))
	require.NoError(t, f.SetTargetSize(context.Background(), g2.ID, 0, "s3"))
	assert.Len(t, onlyGroup(t, f).Ended, 1)
}
