package activities_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// countingGroups counts the provider's group listings.
type countingGroups struct {
	connectors.Provider
	reads atomic.Int32
}

func (c *countingGroups) NodeGroups(ctx context.Context, key types.PoolKey) ([]connectors.NodeGroup, error) {
	c.reads.Add(1)
	return c.Provider.NodeGroups(ctx, key)
}

// A purchase reads the provider once: the plan picks its group from the
// groups the pool just read, and reads them itself only when not given.
func TestPlanPicksItsGroupFromTheGroupsThePoolRead(t *testing.T) {
	fleet, err := sim.New(sim.Config{Cluster: "dev", Seed: 3})
	require.NoError(t, err)
	provider := &countingGroups{Provider: fleet}
	a := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: provider}}}
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "dev"}
	ctx := context.Background()
	g, err := fleet.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Name: "visor-api-sim-2c4g", Size: "sim-2c4g", TargetSize: 2}, "create-1")
	require.NoError(t, err)
	pods := []types.PendingPod{{Namespace: "web", Name: "p1", Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}}}
	in := activities.PlanInput{Key: pool, Pods: pods, MaxNewNodes: 5, AllowedSizes: []string{"sim-2c4g"}}

	plan, err := a.PlanScaleUp(ctx, in)
	require.NoError(t, err)
	require.Equal(t, g.ID, plan.GroupID)
	require.Equal(t, 2, plan.GroupTarget)
	require.EqualValues(t, 1, provider.reads.Load(), "without the pool's groups the plan reads them")

	in.Groups, in.GroupsKnown = []activities.PlanGroup{{ID: g.ID, Size: "sim-2c4g", Target: 3}}, true
	plan, err = a.PlanScaleUp(ctx, in)
	require.NoError(t, err)
	require.Equal(t, g.ID, plan.GroupID)
	require.Equal(t, 3, plan.GroupTarget, "the target is the pool's read, not a second one")
	require.EqualValues(t, 1, provider.reads.Load(), "the plan read the provider again")

	in.Groups = nil
	plan, err = a.PlanScaleUp(ctx, in)
	require.NoError(t, err)
	require.Empty(t, plan.GroupID, "the pool read no group: the purchase creates one")
	require.EqualValues(t, 1, provider.reads.Load())
}
