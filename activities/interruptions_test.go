package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// noticeProvider is a provider whose notice queue answers what a test says.
type noticeProvider struct {
	connectors.Provider
	notices []connectors.Interruption
	acked   []string
}

func (n *noticeProvider) Interruptions(context.Context, types.PoolKey) ([]connectors.Interruption, error) {
	return n.notices, nil
}

func (n *noticeProvider) Acknowledge(_ context.Context, _ types.PoolKey, ids []string) error {
	n.acked = append(n.acked, ids...)
	return nil
}

func TestReadInterruptionsKeepsWellFormedNoticesAndSaysWhenThereAreNone(t *testing.T) {
	fleet, err := sim.New(sim.Config{Cluster: "dev", Catalog: catalogs.SimSpot()})
	require.NoError(t, err)
	ctx := context.Background()
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "web", Provider: "sim", Cluster: "dev"}
	g, err := fleet.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g", TargetSize: 1, CapacityType: types.CapacitySpot}, "c1")
	require.NoError(t, err)
	sent, err := fleet.Interrupt(g.Instances[0].ID)
	require.NoError(t, err)

	a := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: connectors.Checked(fleet)}}}
	res, err := a.ReadInterruptions(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, []connectors.Interruption{sent}, res.Notices)
	view, err := a.ReadProvider(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, types.CapacitySpot, view.Groups[0].CapacityType, "the view says the group is spot, so the pool reads notices")
	require.NoError(t, a.AcknowledgeInterruptions(ctx, activities.AckInput{Key: pool, IDs: []string{sent.ID}}))
	res, err = a.ReadInterruptions(ctx, pool)
	require.NoError(t, err)
	require.Empty(t, res.Notices)

	at := sent.NoticeAt
	bad := &noticeProvider{Provider: fleet, notices: []connectors.Interruption{
		{ID: "", InstanceID: "i-1", Kind: connectors.InterruptionSpot, NoticeAt: at, Deadline: at.Add(2 * 60e9)},
		{ID: "m2", Kind: connectors.InterruptionSpot, NoticeAt: at, Deadline: at.Add(2 * 60e9)},
		{ID: "m3", InstanceID: "i-3", Kind: "reboot", NoticeAt: at},
		{ID: "m4", InstanceID: "i-4", Kind: connectors.InterruptionSpot, NoticeAt: at, Deadline: at.Add(-1)},
		{ID: "m5", InstanceID: "i-5", Kind: connectors.InterruptionRebalance, NoticeAt: at},
	}}
	a = &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: connectors.Checked(bad)}}}
	res, err = a.ReadInterruptions(ctx, pool)
	require.NoError(t, err)
	require.Len(t, res.Notices, 1)
	require.Equal(t, "m5", res.Notices[0].ID)
	require.Len(t, res.Dropped, 4, "%v", res.Dropped)

	plain := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: struct{ connectors.Provider }{fleet}}}}
	res, err = plain.ReadInterruptions(ctx, pool)
	require.NoError(t, err)
	require.True(t, res.Unsupported)
	require.Error(t, plain.AcknowledgeInterruptions(ctx, activities.AckInput{Key: pool, IDs: []string{"x"}}))
}
