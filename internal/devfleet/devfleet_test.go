package devfleet_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// The spec file's faults reach the simulated cluster they name, and only it.
func TestSpecFileFaultsReachTheirSimulatedCluster(t *testing.T) {
	spec, err := starter.ParseSpecFile("pools.yaml", []byte(`
clusters:
  - {id: east, provider: sim}
  - {id: west, provider: sim}
pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
faults:
  east: {seed: 3, insufficientCapacitySizes: [sim-2c4g], leakRate: 1}
`))
	require.NoError(t, err)
	fleet, err := devfleet.New(spec, devfleet.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	spec2 := func(cluster string) connectors.NodeGroupSpec {
		return connectors.NodeGroupSpec{Pool: types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: cluster}, Size: "sim-2c4g", TargetSize: 1}
	}

	_, err = fleet.Sims["east"].CreateNodeGroup(ctx, spec2("east"), "k1")
	assert.True(t, errclass.IsInsufficientCapacity(err), "east runs out of sim-2c4g: %v", err)
	_, err = fleet.Sims["west"].CreateNodeGroup(ctx, spec2("west"), "k1")
	require.NoError(t, err, "west has no faults")
	assert.Zero(t, fleet.Sims["west"].LeakedMachines())

	spec2East := spec2("east")
	spec2East.Size = "sim-4c8g"
	_, err = fleet.Sims["east"].CreateNodeGroup(ctx, spec2East, "k2")
	require.NoError(t, err)
	assert.Equal(t, 1, fleet.Sims["east"].LeakedMachines(), "leakRate 1: every launch leaks one")
}

// `visor dev`'s clusters get the same argument checks as a worker's: an
// unkeyed call is refused with the uniform operation name before the sim
// sees it, and the sim stays a LeakFinder for leak collection.
func TestSimulatedClustersAreChecked(t *testing.T) {
	spec, err := starter.ParseSpecFile("pools.yaml", []byte(`
clusters:
  - {id: east, provider: sim}
pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
`))
	require.NoError(t, err)
	fleet, err := devfleet.New(spec, devfleet.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	c, err := fleet.Clusters.Cluster(ctx, "east")
	require.NoError(t, err)
	pool := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}

	_, err = c.Provider.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g", TargetSize: 1}, "")
	require.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "sim "+connectors.OpCreateNodeGroup)
	groups, err := fleet.Sims["east"].NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, groups, "the refused call reached no sim")
	_, isLeakFinder := c.Provider.(connectors.LeakFinder)
	assert.True(t, isLeakFinder)
}
