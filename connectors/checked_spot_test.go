package connectors_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// catalogRecorder is a recorder selling what a built-in catalog sells.
type catalogRecorder struct {
	recorder
	catalog []types.InstanceType
}

func (r *catalogRecorder) Catalog(context.Context) ([]types.InstanceType, error) {
	return r.catalog, nil
}

// A provider without a spot market refuses spot, naming capacityType,
// before the provider is called; one whose catalog sells spot is asked.
func TestCheckedRefusesSpotWhereTheCatalogSellsNone(t *testing.T) {
	ctx := context.Background()
	do, _ := catalogs.Of("digitalocean")
	rec := &catalogRecorder{catalog: do}
	spec := connectors.NodeGroupSpec{Pool: pool, Size: do[0].Name, TargetSize: 1, CapacityType: types.CapacitySpot}
	_, err := connectors.Checked(rec).CreateNodeGroup(ctx, spec, "k")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), "spec.capacityType")
	assert.Zero(t, rec.calls)

	spec.CapacityType = "preemptible"
	_, err = connectors.Checked(rec).CreateNodeGroup(ctx, spec, "k")
	assert.ErrorContains(t, err, `capacity type "preemptible"`)

	aws := &catalogRecorder{catalog: catalogs.AWS()}
	spec = connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large", TargetSize: 1, CapacityType: types.CapacitySpot}
	_, err = connectors.Checked(aws).CreateNodeGroup(ctx, spec, "k")
	require.NoError(t, err)
	assert.Equal(t, 1, aws.calls)
}

// A zone the catalog does not offer the size in is refused, naming
// spec.zone, before the provider is called (a provider without zones, or
// a zone the size lacks); one it offers is asked.
func TestCheckedRefusesAZoneTheCatalogDoesNotOffer(t *testing.T) {
	ctx := context.Background()
	do, _ := catalogs.Of("digitalocean")
	rec := &catalogRecorder{catalog: do}
	spec := connectors.NodeGroupSpec{Pool: pool, Size: do[0].Name, TargetSize: 1, Zone: "nyc1-a"}
	_, err := connectors.Checked(rec).CreateNodeGroup(ctx, spec, "k")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), `spec.zone: `)
	assert.Contains(t, err.Error(), `"nyc1-a"`)
	assert.Zero(t, rec.calls)

	sim := &catalogRecorder{catalog: catalogs.SimSpot()}
	spec = connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g", TargetSize: 1, Zone: catalogs.SimZones[1]}
	_, err = connectors.Checked(sim).CreateNodeGroup(ctx, spec, "k")
	require.NoError(t, err)
	assert.Equal(t, 1, sim.calls)
	spec.Zone = "sim-z"
	_, err = connectors.Checked(sim).CreateNodeGroup(ctx, spec, "k")
	assert.ErrorContains(t, err, `zone "sim-z"`)
	assert.Equal(t, 1, sim.calls)
}
