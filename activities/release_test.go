package activities_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// oneCluster serves its cluster's provider through connectors.Checked, as
// a worker does: providers leave argument checks to it.
type oneCluster struct{ c connectors.Cluster }

func (o oneCluster) Cluster(_ context.Context, id string) (connectors.Cluster, error) {
	if id != o.c.ID {
		return connectors.Cluster{}, fmt.Errorf("unknown cluster %s", id)
	}
	c := o.c
	c.Provider = connectors.Checked(c.Provider)
	return c, nil
}

func TestReleasePoolDeletesEveryGroupAndLeavesNothingAtTheProvider(t *testing.T) {
	fleet, err := sim.New(sim.Config{Cluster: "dev", Seed: 3})
	require.NoError(t, err)
	a := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: fleet}}}
	ctx := context.Background()
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "web", Provider: "sim", Cluster: "dev"}
	other := pool
	other.Service = "api"
	for i, size := range []string{"sim-2c4g", "sim-4c8g"} {
		_, err := fleet.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: size, TargetSize: 2}, connectors.IdempotencyKey(fmt.Sprint("c", i)))
		require.NoError(t, err)
	}
	_, err = fleet.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: other, Size: "sim-2c4g", TargetSize: 1}, "c-other")
	require.NoError(t, err)
	// A group at target zero is deleted too: DOKS could not even hold one.
	empty, err := fleet.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "sim-8c16g", TargetSize: 0}, "c-empty")
	require.NoError(t, err)

	// Every answer is lost after the change was applied; the retries,
	// with the same key, converge.
	require.NoError(t, fleet.SetFaults(sim.FaultConfig{CreateSucceedsButErrorsRate: 1}))
	in := activities.ReleaseInput{Key: pool, IdempotencyKey: "pool/acme/shop/web/sim/dev#deregister"}
	_, err = a.ReleasePool(ctx, in)
	require.Error(t, err)
	require.NoError(t, fleet.SetFaults(sim.FaultConfig{}))
	res, err := a.ReleasePool(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Groups, "the first attempt deleted one group before its answer was lost")

	groups, err := fleet.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, groups, "nothing of the pool is left at the provider")
	left, err := fleet.NodeGroups(ctx, other)
	require.NoError(t, err)
	require.Len(t, left, 1, "another pool's group is untouched")
	assert.Len(t, left[0].Instances, 1)
	assert.NotEqual(t, empty.ID, left[0].ID)

	res, err = a.ReleasePool(ctx, in)
	require.NoError(t, err, "releasing a released pool is success")
	assert.Zero(t, res.Groups)
}
