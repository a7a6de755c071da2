package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// simPlanner is the activities over one sim cluster, "dev", selling
// catalog, and a pool on it: what the plan tests buy with.
func simPlanner(t *testing.T, catalog []types.InstanceType) (*activities.Activities, types.PoolKey) {
	t.Helper()
	fleet, err := sim.New(sim.Config{Cluster: "dev", Seed: 3, Catalog: catalog})
	require.NoError(t, err)
	a := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: fleet}}}
	return a, types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "dev"}
}
