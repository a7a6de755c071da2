package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

func TestSoldOutOfferingFailsOnlyThatOffering(t *testing.T) {
	f, _ := newTestFleet(t, func(cfg *Config) {
		cfg.Catalog = catalogs.SimSpot()
		cfg.Faults = FaultConfig{SoldOutOfferings: []string{"sim-4c8g/sim-a/spot"}}
	})
	ctx := context.Background()
	pool := testPool("web")
	spotA := connectors.NodeGroupSpec{Pool: pool, Size: "sim-4c8g", TargetSize: 1, CapacityType: types.CapacitySpot, Zone: "sim-a"}
	_, err := f.CreateNodeGroup(ctx, spotA, "k1")
	require.True(t, errclass.IsInsufficientCapacity(err), "%v", err)
	assert.Contains(t, err.Error(), "sim-4c8g/sim-a/spot")

	spotB := spotA
	spotB.Zone, spotB.Name = "sim-b", "web-spot-b"
	g, err := f.CreateNodeGroup(ctx, spotB, "k2")
	require.NoError(t, err)
	assert.Equal(t, types.CapacitySpot, g.CapacityType)
	assert.Equal(t, "sim-b", g.Zone)
	nodes := listNodes(t, f)
	require.Len(t, nodes, 1)
	assert.Equal(t, "spot", nodes[0].Labels[types.CapacityTypeLabel])
	assert.Equal(t, "sim-b", nodes[0].Labels[corev1.LabelTopologyZone])

	// Every zone: the empty zone in the key.
	require.NoError(t, f.SetFaults(FaultConfig{SoldOutOfferings: []string{"sim-4c8g//spot"}}))
	err = f.SetTargetSize(ctx, g.ID, 2, "k3")
	assert.True(t, errclass.IsInsufficientCapacity(err), "%v", err)

	err = f.SetFaults(FaultConfig{SoldOutOfferings: []string{"sim-4c8g/spot"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want size/zone/capacity-type")
}

func TestSpotRefusedWhereTheCatalogSellsNone(t *testing.T) {
	f, _ := newTestFleet(t, func(c *Config) { c.Catalog = catalogs.Sim() }) // on demand only
	_, err := f.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{
		Pool: testPool("web"), Size: "sim-4c8g", TargetSize: 1, CapacityType: types.CapacitySpot,
	}, "k1")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "spec.capacityType")
}
