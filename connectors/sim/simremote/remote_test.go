package simremote

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

var pool = types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "lab"}

// hosted is one real sim, served as a sim host does.
func hosted(t *testing.T) (*sim.Fleet, *Client) {
	t.Helper()
	f, err := sim.New(sim.Config{Cluster: "lab", Provider: "sim"})
	require.NoError(t, err)
	srv := httptest.NewServer(Handler(map[string]connectors.Cluster{"lab": {
		ID: "lab", Provider: connectors.Checked(f),
		Observer: kubernetes.NewObserver(f.Clientset(), kubernetes.Config{Cluster: "lab", Provider: "sim"}),
		Drainer:  kubernetes.NewDrainer(f.Clientset(), kubernetes.DrainerConfig{}),
	}}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, "lab", "sim")
	require.NoError(t, err)
	return f, c
}

func TestTwoClientsActOnOneCloudAndKeysHoldAcrossThem(t *testing.T) {
	f, c := hosted(t)
	ctx := context.Background()
	other, err := New(c.base[:len(c.base)-len(pathPrefix+"lab/")], "lab", "sim")
	require.NoError(t, err)

	spec := connectors.NodeGroupSpec{Pool: pool, Name: "acme-web-api-small", Size: catalogs.Sim()[0].Name, TargetSize: 2}
	g, err := c.CreateNodeGroup(ctx, spec, "pool/acme/1/create")
	require.NoError(t, err)
	// Another worker retrying the same call with the same key gets the
	// same group, not a second one: the sim's idempotency, across clients.
	again, err := other.CreateNodeGroup(ctx, spec, "pool/acme/1/create")
	require.NoError(t, err)
	assert.Equal(t, g.ID, again.ID)
	require.NoError(t, other.SetTargetSize(ctx, g.ID, 3, "pool/acme/2/up"))

	groups, err := c.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, 3, groups[0].TargetSize)
	assert.Len(t, f.Inventory().Groups, 1, "the host's sim has the one group")

	require.NoError(t, f.Step(time.Now().Add(time.Minute)))
	obs, err := other.ObserveCluster(ctx)
	require.NoError(t, err)
	assert.Equal(t, "lab", obs.Cluster)
	cat, err := c.Catalog(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, cat)
	leaked, err := c.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, leaked)
}

func TestErrorsKeepTheirClassAcrossTheWire(t *testing.T) {
	_, c := hosted(t)
	ctx := context.Background()
	err := c.SetTargetSize(ctx, "no-such-group", 1, "k1")
	require.Error(t, err)
	assert.Equal(t, errclass.NotFound, errclass.Of(err), "%v", err)
	assert.Contains(t, err.Error(), "SetTargetSize")

	// The worker's own Checked wrapper refuses before anything is sent.
	err = c.Cluster("lab").Provider.SetTargetSize(ctx, "g", 1, "")
	assert.Equal(t, errclass.Permanent, errclass.Of(err))

	unknown, err := New(c.base[:len(c.base)-len(pathPrefix+"lab/")], "nowhere", "sim")
	require.NoError(t, err)
	_, err = unknown.NodeGroups(ctx, pool)
	assert.Equal(t, errclass.Permanent, errclass.Of(err), "a cluster the host does not serve is a configuration error: %v", err)
	assert.Contains(t, err.Error(), `no cluster "nowhere"`)

	down, err := New("http://127.0.0.1:1", "lab", "sim")
	require.NoError(t, err)
	_, err = down.NodeGroups(ctx, pool)
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "a host that is down is worth a retry: %v", err)
}

func TestDrainStreamsProgressThenItsResult(t *testing.T) {
	f, c := hosted(t)
	ctx := context.Background()
	require.NoError(t, f.AddDemand(pool, sim.DemandProfile{Shape: sim.ShapeSteady, Pods: 1, Requests: types.Resources{MilliCPU: 100, Memory: types.MiB}}))
	g, err := c.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Name: "acme-web-api-small", Size: catalogs.Sim()[0].Name, TargetSize: 1}, "k-create")
	require.NoError(t, err)
	now := time.Now()
	for i := range 10 {
		require.NoError(t, f.Step(now.Add(time.Duration(i)*time.Minute)))
	}
	groups, err := c.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	require.Len(t, groups[0].Instances, 1, "group %s has its machine", g.ID)
	node := groups[0].Instances[0].Name

	var progress []connectors.DrainProgress
	res, err := c.Drain(ctx, node, connectors.DrainOptions{
		Deadline: time.Now().Add(20 * time.Second), EvictionRetry: 100 * time.Millisecond,
		Progress: func(p connectors.DrainProgress) { progress = append(progress, p) },
	})
	require.NoError(t, err)
	assert.Equal(t, node, res.Node)
	require.NotEmpty(t, progress, "progress lines reach the caller (the activity heartbeats with them)")
	assert.True(t, progress[0].Cordoned)
	require.NoError(t, c.Uncordon(ctx, node))

	_, err = c.Drain(ctx, "no-such-node", connectors.DrainOptions{Deadline: time.Now().Add(time.Second)})
	assert.Error(t, err)
}

func TestNewRefusesWhatIsNotAnHTTPHost(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:80", "https://127.0.0.1:1", "http://", "http://h:1/path"} {
		_, err := New(bad, "lab", "sim")
		assert.Error(t, err, bad)
	}
}

// The host serves its fleet through connectors.Checked even when handed it
// bare: a call off the wire, from a client that skipped the checks, is
// refused before the sim (which does not repeat them) sees it.
func TestHostChecksArgumentsOffTheWire(t *testing.T) {
	f, err := sim.New(sim.Config{Cluster: "lab", Provider: "sim"})
	require.NoError(t, err)
	srv := httptest.NewServer(Handler(map[string]connectors.Cluster{"lab": {ID: "lab", Provider: f}}))
	t.Cleanup(srv.Close)
	raw, err := New(srv.URL, "lab", "sim")
	require.NoError(t, err)
	spec := connectors.NodeGroupSpec{Pool: pool, Size: catalogs.Sim()[0].Name, TargetSize: 1}
	_, err = raw.CreateNodeGroup(context.Background(), spec, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "idempotency key is empty")
	assert.Empty(t, f.Inventory().Groups, "nothing reached the sim")
}
