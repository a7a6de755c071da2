package vsphere

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestDeleteNodeGroupDestroysItsVMsAndFolder(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	pool := testPool("release")
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")
	small, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 2}, key)
	require.NoError(t, err)
	_, err = p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "large", TargetSize: 1}, key+"/large")
	require.NoError(t, err)
	for _, i := range small.Instances {
		assert.WithinDuration(t, time.Now(), i.CreatedAt, time.Hour, "CreatedAt is the VM's config.createDate")
	}

	require.NoError(t, p.DeleteNodeGroup(ctx, small.ID, key+"/release"))
	for _, i := range small.Instances {
		assert.False(t, sim.vmExists(t, small.ID, i.Name))
	}
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1, "the emptied folder is gone, so the group is no longer listed")
	assert.Equal(t, GroupID(pool.NodePoolLabel(), "large"), groups[0].ID)
	require.NoError(t, p.DeleteNodeGroup(ctx, small.ID, key+"/release"), "a group already gone is success")
	assert.True(t, errclass.IsPermanent(p.DeleteNodeGroup(ctx, "no-slash", key)))
}

func TestStrayVMInThePoolFolderIsALeak(t *testing.T) {
	ctx := context.Background()
	sim := startVCSim(t)
	p := sim.provider(t)
	pool := testPool("gc")
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: 1}, key)
	require.NoError(t, err)
	none, err := p.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, none, "group members are not leaks")

	// A VM lands in the pool's folder itself, outside every size folder.
	poolFolder, err := p.childFolder(ctx, "test", p.folder, pool.NodePoolLabel())
	require.NoError(t, err)
	require.NoError(t, p.cloneAll(ctx, "test", poolFolder, p.templates["small"], []string{"stray-1"}))
	leaks, err := p.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	require.Len(t, leaks, 1)
	assert.Equal(t, "stray-1", leaks[0].Name)
	other, err := p.LeakedInstances(ctx, testPool("elsewhere"))
	require.NoError(t, err)
	assert.Empty(t, other)

	err = p.DeleteInstances(ctx, pool, []string{leaks[0].ID, g.Instances[0].ID}, key+"/gc")
	assert.True(t, errclass.IsPermanent(err), "a group member is refused: %v", err)
	require.NoError(t, p.DeleteInstances(ctx, pool, []string{leaks[0].ID}, key+"/gc"))
	leaks, err = p.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, leaks)
	require.NoError(t, p.DeleteInstances(ctx, pool, []string{"vm-404"}, key+"/gc"), "already gone is success")
	assert.True(t, sim.vmExists(t, g.ID, g.Instances[0].Name))
}
