package hetzner_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
)

func TestDeleteNodeGroupDeletesEveryServerOfTheGroupOnly(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	_, err := p.CreateNodeGroup(ctx, spec(3), "k")
	require.NoError(t, err)
	bigger := spec(1)
	bigger.Size = "cx32"
	_, err = p.CreateNodeGroup(ctx, bigger, "k2")
	require.NoError(t, err)
	stranger := srv.AddServer("stranger", "cx22", nil)

	require.NoError(t, p.DeleteNodeGroup(ctx, groupID, "dereg/"+connectors.IdempotencyKey(groupID)))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1, "the cx32 group is another group")
	assert.Equal(t, hetzner.GroupID(pool.NodePoolLabel(), "cx32"), groups[0].ID)
	assert.Contains(t, names(srv.Servers()), stranger.Name)
	assert.Len(t, srv.Servers(), 2)

	require.NoError(t, p.DeleteNodeGroup(ctx, groupID, "dereg"), "a group already gone is success")
	assert.Equal(t, 3, fakehttp.CountPrefix(srv.Requests(), "DELETE "))
	assert.True(t, errclass.IsPermanent(p.DeleteNodeGroup(ctx, "no-slash", "k")))
}

func TestNodeGroupsReportCreatedAt(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	g, err := p.CreateNodeGroup(ctx, spec(2), "k")
	require.NoError(t, err)
	servers := srv.Servers()
	require.Len(t, g.Instances, 2)
	for i, inst := range g.Instances {
		assert.True(t, inst.CreatedAt.Equal(servers[i].Created), "CreatedAt is the server's created time")
		assert.False(t, inst.CreatedAt.IsZero())
	}
}

func TestLeakedServersCarryThePoolLabelButNoGroupsSize(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	_, err := p.CreateNodeGroup(ctx, spec(2), "k")
	require.NoError(t, err)
	poolLabel := map[string]string{hetzner.LabelPool: pool.NodePoolLabel()}
	noSize := srv.AddServer("no-size", "cx22", poolLabel)
	wrongSize := srv.AddServer("wrong-size", "cx32", map[string]string{hetzner.LabelPool: pool.NodePoolLabel(), hetzner.LabelSize: "cx22"})
	srv.AddServer("other-pool", "cx22", map[string]string{hetzner.LabelPool: "acme.shop.web.hetzner"})

	leaks, err := p.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	var leaked []string
	for _, l := range leaks {
		leaked = append(leaked, l.Name)
		assert.False(t, l.CreatedAt.IsZero())
	}
	assert.ElementsMatch(t, []string{noSize.Name, wrongSize.Name}, leaked)
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Len(t, groups[0].Instances, 2, "leaks are in no group")

	// A group member is refused, and nothing is deleted.
	member := groups[0].Instances[0].ID
	err = p.DeleteInstances(ctx, pool, []string{fmt.Sprint(noSize.ID), member}, "gc")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Len(t, srv.Servers(), 5)

	require.NoError(t, p.DeleteInstances(ctx, pool, []string{fmt.Sprint(noSize.ID), fmt.Sprint(wrongSize.ID)}, "gc"))
	leaks, err = p.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, leaks)
	assert.Len(t, srv.Servers(), 3)
	require.NoError(t, p.DeleteInstances(ctx, pool, []string{fmt.Sprint(noSize.ID)}, "gc"), "already gone is success")
}
