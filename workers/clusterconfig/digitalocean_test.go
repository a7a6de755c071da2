package clusterconfig_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/digitalocean/godo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/digitalocean/fakeapi"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

const (
	doToken   = "dop_v1_test_token_value"
	doCluster = "6c1b9f1e-5a1d-4c7e-9a63-2d0f5a3e8b11"
	doEnv     = "VISOR_CLUSTERCONFIG_TEST_DO_TOKEN"
)

var doPool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "digitalocean", Cluster: "do-ams3"}

// doFile is a clusters file with one DOKS cluster reached through a
// kubeconfig (never contacted here: client-go connects lazily) and the
// loopback fake of the DigitalOcean API.
func doFile(t *testing.T, api *fakeapi.Server, credentials string) clusterconfig.File {
	t.Helper()
	kubeconfig := writeKubeconfig(t, "do-ams3", map[string]string{"do-ams3": "https://127.0.0.1:1"})
	return mustLoad(t, fmt.Sprintf(`
clusters:
  - id: do-ams3
    provider: digitalocean
    kubeconfig: %s
    digitalocean:
      credentials: %q
      clusterID: %s
      baseURL: %s
`, kubeconfig, credentials, doCluster, api.URL))
}

func newDOAPI(t *testing.T) *fakeapi.Server {
	api := fakeapi.New(doToken, doCluster)
	t.Cleanup(api.Close)
	return api
}

func TestDigitalOceanClusterBuildsWithEnvCredentialAndListsNodeGroups(t *testing.T) {
	api := newDOAPI(t)
	seeded := api.AddPool(doCluster, godo.KubernetesNodePoolCreateRequest{
		Name: "api-pool", Size: "s-4vcpu-8gb", Count: 2,
		Labels: map[string]string{types.LabelPool: doPool.NodePoolLabel()},
	})
	api.AddPool(doCluster, godo.KubernetesNodePoolCreateRequest{Name: "someone-elses", Size: "s-2vcpu-4gb", Count: 1})
	t.Setenv(doEnv, doToken)

	src := newSource(t, doFile(t, api, "env:"+doEnv))
	c, err := src.Cluster(context.Background(), "do-ams3")
	require.NoError(t, err)
	assert.Equal(t, "digitalocean", c.Provider.Name())
	require.NotNil(t, c.Observer)
	require.NotNil(t, c.Drainer)

	groups, err := c.Provider.NodeGroups(context.Background(), doPool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, seeded.ID, groups[0].ID)
	assert.Equal(t, 2, groups[0].TargetSize)
	assert.Len(t, groups[0].Instances, 2)
}

// A missing credential fails non-retryably, naming the reference; the
// failure is not cached, so once the secret is there the next activity works.
func TestMissingEnvCredentialIsPermanentAndNamesTheReference(t *testing.T) {
	api := newDOAPI(t)
	const missing = "VISOR_CLUSTERCONFIG_TEST_UNSET"
	require.NoError(t, os.Unsetenv(missing))
	src := newSource(t, doFile(t, api, "env:"+missing))

	_, err := src.Cluster(context.Background(), "do-ams3")
	require.Error(t, err)
	var ce *errclass.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, errclass.Permanent, ce.Class)
	assert.Contains(t, err.Error(), "env:"+missing)
	assert.Contains(t, err.Error(), "connect cluster do-ams3")

	t.Setenv(missing, doToken)
	c, err := src.Cluster(context.Background(), "do-ams3")
	require.NoError(t, err)
	_, err = c.Provider.NodeGroups(context.Background(), doPool)
	assert.NoError(t, err)
}

// A credential that is present but malformed fails Permanent, naming the
// reference and never echoing what the file holds.
func TestMalformedCredentialNeverAppearsInTheError(t *testing.T) {
	api := newDOAPI(t)
	const secret = "dop_v1_leaked\x01value"
	path := filepath.Join(t.TempDir(), "do-token")
	require.NoError(t, os.WriteFile(path, []byte(secret), 0o600))

	_, err := newSource(t, doFile(t, api, "file:"+path)).Cluster(context.Background(), "do-ams3")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "file:"+path)
	assert.NotContains(t, err.Error(), "dop_v1_leaked")
	assert.NotContains(t, err.Error(), "value")
}

// A wrong token is found on the first API call, Permanent (the provider
// answers 401), so a misconfigured worker does not retry forever.
func TestRejectedTokenIsPermanentOnFirstCall(t *testing.T) {
	api := newDOAPI(t)
	t.Setenv(doEnv, "dop_v1_wrong")
	c, err := newSource(t, doFile(t, api, "env:"+doEnv)).Cluster(context.Background(), "do-ams3")
	require.NoError(t, err, "building makes no API call")
	_, err = c.Provider.NodeGroups(context.Background(), doPool)
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.NotContains(t, err.Error(), "dop_v1_wrong")
}
