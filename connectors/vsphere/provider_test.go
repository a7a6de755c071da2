package vsphere

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	vtypes "github.com/hanzoai/visor-fleet/types"
)

func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	pool := testPool("web")
	label := pool.NodePoolLabel()
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")

	created, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 2}, key)
	require.NoError(t, err)
	assert.Equal(t, GroupID(label, "small"), created.ID)
	assert.Equal(t, "small", created.Size)
	assert.Equal(t, 2, created.TargetSize)
	assert.Equal(t, label, created.Labels[vtypes.LabelPool])
	require.Len(t, created.Instances, 2)
	for ordinal := 0; ordinal < 2; ordinal++ {
		assert.Contains(t, names(created), VMName(label, "small", key, ordinal))
	}
	for _, i := range created.Instances {
		assert.Equal(t, connectors.InstanceRunning, i.State, "clones are powered on")
	}

	again, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 2}, key)
	require.NoError(t, err)
	assert.Equal(t, names(created), names(again), "a repeated create clones nothing")

	scale := key + "/scale"
	require.NoError(t, p.SetTargetSize(ctx, created.ID, 4, scale))
	require.NoError(t, p.SetTargetSize(ctx, created.ID, 4, scale), "retry")
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, 4, groups[0].TargetSize)

	// Delete a powered-on VM by its node name: powered off, then destroyed.
	victim := created.Instances[0].Name
	require.True(t, sim.vmExists(t, created.ID, victim))
	require.NoError(t, p.DeleteNodes(ctx, created.ID, []string{victim}, key+"/delete"))
	assert.False(t, sim.vmExists(t, created.ID, victim))
	require.NoError(t, p.DeleteNodes(ctx, created.ID, []string{victim, "never-existed"}, key+"/delete"), "gone is success")
	groups, err = p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 3, groups[0].TargetSize, "the target follows the VM count")

	require.NoError(t, p.SetTargetSize(ctx, created.ID, 1, key+"/shrink"))
	groups, err = p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 1, groups[0].TargetSize)

	large, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "large", TargetSize: 1}, key+"/large")
	require.NoError(t, err)
	groups, err = p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Len(t, groups, 2, "one group per size")
	assert.NotEqual(t, created.ID, large.ID)

	other, err := p.NodeGroups(ctx, testPool("someone-else"))
	require.NoError(t, err)
	assert.Empty(t, other)
	err = p.SetTargetSize(ctx, GroupID(testPool("someone-else").NodePoolLabel(), "small"), 1, key)
	assert.True(t, errclass.IsNotFound(err), "got %v", err)
}

// A retry that overlaps a still-running first attempt (Temporal retries an
// activity that timed out while it keeps going) plans the same key-derived
// names; whichever clone comes second gets vCenter's DuplicateName and must
// accept the other's VM, leaving exactly the target.
func TestOverlappingAttemptsMeetOnDuplicateName(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	first, second := sim.provider(t), sim.provider(t)
	pool := testPool("dup")
	key := connectors.IdempotencyKey("decision-9")
	g, err := first.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 0}, "create")
	require.NoError(t, err)

	var secondErr error
	ran := make(chan struct{})
	first.beforeClone = func(ctx context.Context, name string) {
		select {
		case <-ran:
		default:
			close(ran)
			// The overlapping attempt runs to completion before the first
			// attempt's clones reach vCenter.
			secondErr = second.SetTargetSize(ctx, g.ID, 2, key)
		}
	}
	// Both of the first attempt's clones must wait for the second attempt.
	first.beforeClone = serialize(first.beforeClone)
	require.NoError(t, first.SetTargetSize(ctx, g.ID, 2, key))
	require.NoError(t, secondErr)

	groups, err := first.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, 2, groups[0].TargetSize, "exactly the target, no duplicates")
	assert.Contains(t, names(groups[0]), VMName(pool.NodePoolLabel(), "small", key, 0))
	assert.Contains(t, names(groups[0]), VMName(pool.NodePoolLabel(), "small", key, 1))
}

// A name held by something other than a VM (here a folder) is not
// adopted: the clone fails Retryable and nothing is counted.
func TestDuplicateNameOfNonVMIsNotAdopted(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	pool := testPool("squat")
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 0}, "create")
	require.NoError(t, err)
	folder, err := sim.finder.Folder(ctx, "/DC0/vm/visor/"+g.ID)
	require.NoError(t, err)
	key := connectors.IdempotencyKey("decision-1")
	_, err = folder.CreateFolder(ctx, VMName(pool.NodePoolLabel(), "small", key, 0))
	require.NoError(t, err)

	err = p.SetTargetSize(ctx, g.ID, 1, key)
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "got %v", err)
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Equal(t, 0, groups[0].TargetSize)
}

func TestArgumentsAreCheckedFirst(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := connectors.Checked(sim.provider(t)) // as every worker builds it
	pool := testPool("args")
	checks := map[string]error{
		"bad group id":    p.SetTargetSize(ctx, "no-slash", 1, "k"),
		"bad pool label":  p.SetTargetSize(ctx, "a.b/small", 1, "k"),
		"negative target": p.SetTargetSize(ctx, GroupID(pool.NodePoolLabel(), "small"), -1, "k"),
		"empty key":       p.SetTargetSize(ctx, GroupID(pool.NodePoolLabel(), "small"), 1, ""),
		"unknown size": func() error {
			_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "huge"}, "k")
			return err
		}(),
		"bad pool":   func() error { _, err := p.NodeGroups(ctx, testPool("Not_A_Label")); return err }(),
		"empty node": p.DeleteNodes(ctx, GroupID(pool.NodePoolLabel(), "small"), []string{""}, "k"),
	}
	for name, err := range checks {
		assert.True(t, errclass.IsPermanent(err), "%s: %v", name, err)
	}
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, groups, "bad input changed nothing")

	cat, err := p.Catalog(ctx)
	require.NoError(t, err)
	require.Len(t, cat, 2)
	assert.Equal(t, "small", cat[0].Name)
	assert.EqualValues(t, 2000, cat[0].MilliCPU)
}
