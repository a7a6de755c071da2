package clusterconfig_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

const simFile = `
clusters:
  - id: lab
    provider: sim
    sim: {tick: 10ms, statePath: state/lab.json}
`

func newSource(t *testing.T, f clusterconfig.File) *clusterconfig.Source {
	t.Helper()
	s := clusterconfig.NewSource(f, clusterconfig.Options{})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// A sim cluster is built on first use and runs: a created group's
// machines register as nodes the observer sees, and Close saves its state.
func TestSimClusterBuildsAndWorks(t *testing.T) {
	f := mustLoad(t, simFile)
	src := newSource(t, f)
	ctx := context.Background()
	c, err := src.Cluster(ctx, "lab")
	require.NoError(t, err)
	require.Equal(t, "lab", c.ID)
	require.Equal(t, "sim", c.Provider.Name())

	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "lab"}
	catalog, err := c.Provider.Catalog(ctx)
	require.NoError(t, err)
	_, err = c.Provider.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: catalog[0].Name, TargetSize: 2}, "pool/acme/shop/api/sim/lab#1")
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		obs, err := c.Observer.ObserveCluster(ctx)
		return err == nil && len(obs.Pools[pool.WorkflowID()].Nodes) == 2
	}, 10*time.Second, 20*time.Millisecond, "the background simulation never registered the 2 nodes")

	require.NoError(t, src.Close(ctx))
	state := filepath.Join(filepath.Dir(f.Path), "state", "lab.json")
	_, err = os.Stat(state)
	assert.NoError(t, err, "Close should stop the simulation and save its state")
	_, err = src.Cluster(ctx, "lab")
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "after Close: %v", err)
}

// Connectors are built once per cluster, however many activities ask at once.
func TestClusterIsCachedPerCluster(t *testing.T) {
	src := newSource(t, mustLoad(t, `
clusters:
  - id: lab
    provider: sim
  - id: lab2
    provider: sim
`))
	ctx := context.Background()
	first, err := src.Cluster(ctx, "lab")
	require.NoError(t, err)

	var wg sync.WaitGroup
	got := make([]connectors.Cluster, 8)
	for i := range got {
		wg.Go(func() {
			c, err := src.Cluster(ctx, "lab")
			assert.NoError(t, err)
			got[i] = c
		})
	}
	wg.Wait()
	for _, c := range got {
		assert.Same(t, first.Provider, c.Provider)
		assert.Same(t, first.Observer, c.Observer)
		assert.Same(t, first.Drainer, c.Drainer)
	}

	other, err := src.Cluster(ctx, "lab2")
	require.NoError(t, err)
	assert.NotSame(t, first.Provider, other.Provider)
	assert.Equal(t, []string{"lab", "lab2"}, src.IDs())
}

func TestUnknownClusterIsPermanentAndListsKnownOnes(t *testing.T) {
	src := newSource(t, mustLoad(t, simFile))
	_, err := src.Cluster(context.Background(), "fra1")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	assert.Contains(t, err.Error(), `"fra1"`)
	assert.Contains(t, err.Error(), "it has: lab")
}

// A sim whose state file cannot be read fails Permanent, naming the cluster.
func TestBrokenSimStateIsPermanent(t *testing.T) {
	f := mustLoad(t, simFile)
	state := f.Clusters[0].Config().(*clusterconfig.SimConfig).StatePath
	require.NoError(t, os.MkdirAll(filepath.Dir(state), 0o700))
	require.NoError(t, os.WriteFile(state, []byte("{not json"), 0o600))
	_, err := newSource(t, f).Cluster(context.Background(), "lab")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "connect cluster lab")
}
