package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
)

// A cluster's public status, the one query a tenant may make of a
// cluster (auth/frontend), is its status without the pools, which name
// every org's pools on it.
func TestClusterPublicStatusNamesNoPools(t *testing.T) {
	env, _ := newTestCluster(t)
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		full := clusterStatus(t, env)
		require.Len(t, full.Pools, len(clusterPools))
		v, err := env.QueryWorkflow(contract.QueryClusterPublic)
		require.NoError(t, err)
		var public contract.ClusterStatus
		require.NoError(t, v.Get(&public))
		require.Empty(t, public.Pools, "the public status lists pools")
		require.Equal(t, full.Declared, public.Declared)
		require.Equal(t, full.Observed.Reachable, public.Observed.Reachable)
	}, 5*time.Second)
	endCluster(env, time.Minute)
	runCluster(t, env, contract.PhaseActive)
	requireCanceled(t, env)
}
