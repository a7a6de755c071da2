package clusterconfig_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/connectors/sim/simremote"
	"github.com/hanzoai/visor-fleet/types"
)

// Two workers' clusters files naming one sim host act on one cloud: a
// group one creates is the other's to scale, and the host's sim has it.
func TestSimEndpointSharesOneHostedFleetBetweenWorkers(t *testing.T) {
	fleet, err := sim.New(sim.Config{Cluster: "lab", Provider: "sim"})
	require.NoError(t, err)
	host := httptest.NewServer(simremote.Handler(map[string]connectors.Cluster{"lab": {
		ID: "lab", Provider: connectors.Checked(fleet),
		Observer: kubernetes.NewObserver(fleet.Clientset(), kubernetes.Config{Cluster: "lab", Provider: "sim"}),
		Drainer:  kubernetes.NewDrainer(fleet.Clientset(), kubernetes.DrainerConfig{}),
	}}))
	t.Cleanup(host.Close)
	file := "clusters:\n  - id: lab\n    provider: sim\n    sim: {endpoint: " + host.URL + "}\n"
	ctx := context.Background()
	one, err := newSource(t, mustLoad(t, file)).Cluster(ctx, "lab")
	require.NoError(t, err)
	two, err := newSource(t, mustLoad(t, file)).Cluster(ctx, "lab")
	require.NoError(t, err)

	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "lab"}
	g, err := one.Provider.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: catalogs.Sim()[0].Name, TargetSize: 1}, "pool/acme/shop/api/sim/lab/1/create")
	require.NoError(t, err)
	require.NoError(t, two.Provider.SetTargetSize(ctx, g.ID, 2, "pool/acme/shop/api/sim/lab/2/up"))
	inv := fleet.Inventory()
	require.Len(t, inv.Groups, 1)
	assert.Equal(t, 2, inv.Groups[0].Group.TargetSize)
	_, err = two.Observer.ObserveCluster(ctx)
	assert.NoError(t, err)
}

func TestSimEndpointRefusesLocalSimulationSettings(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: lab
    provider: sim
    sim: {endpoint: "http://127.0.0.1:9/", tick: 1s, statePath: x.json}
  - id: lab2
    provider: sim
    sim: {endpoint: "ftp://127.0.0.1:9"}
`)
	require.Error(t, err)
	got := problemFields(t, err)
	assert.Contains(t, got["lab/sim.endpoint"], "from the host")
	assert.Contains(t, got["lab2/sim.endpoint"], "http://host:port")
	assert.Len(t, got, 2, "%v", got)
}
