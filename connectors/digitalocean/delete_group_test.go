package digitalocean_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// Deleting the pool's own node pool (and a repeat) is the conformance
// suite's; one Visor does not manage is refused and left standing.
func TestDeleteNodeGroupLeavesAPoolVisorDoesNotManage(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	np := seedPool(srv, "api-pool", 2, ourLabels())
	other := seedPool(srv, "unmanaged", 1, nil)

	require.NoError(t, p.DeleteNodeGroup(ctx, np.ID, "dereg/"+connectors.IdempotencyKey(np.ID)))
	left := srv.Pools(cluster)
	require.Len(t, left, 1)
	assert.Equal(t, other.ID, left[0].ID)

	err := p.DeleteNodeGroup(ctx, other.ID, "k")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "a pool Visor does not manage is refused: %v", err)
	assert.Len(t, srv.Pools(cluster), 1)
}

func TestNodeGroupsReportWhenEachNodeWasCreated(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	before := time.Now().Add(-time.Second)
	seedPool(srv, "api-pool", 2, ourLabels())
	groups, err := p.NodeGroups(context.Background(), pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	for _, inst := range groups[0].Instances {
		assert.False(t, inst.CreatedAt.Before(before), "CreatedAt %s comes from the API's created_at", inst.CreatedAt)
		assert.False(t, inst.CreatedAt.After(time.Now()))
	}
}

func TestDeleteNodesMatchesANodeThatNeverRegisteredByID(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	np := seedPool(srv, "api-pool", 3, ourLabels())
	// Both spellings of one node ask for one DELETE, not two.
	require.NoError(t, p.DeleteNodes(context.Background(), np.ID, []string{np.Nodes[2].ID, np.Nodes[2].Name}, "k"))
	got := srv.Pools(cluster)[0]
	assert.Equal(t, 2, got.Count)
	assert.Equal(t, 1, fakehttp.CountPrefix(srv.Requests(), "DELETE "))
}
