package clusterconfig_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestMissingKubeconfigIsPermanentAndNamesThePath(t *testing.T) {
	api := newDOAPI(t)
	t.Setenv(doEnv, doToken)
	f := doFile(t, api, "env:"+doEnv)
	gone := filepath.Join(t.TempDir(), "does-not-exist.yaml")
	f.Clusters[0].Kubeconfig = gone

	_, err := newSource(t, f).Cluster(context.Background(), "do-ams3")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "kubeconfig "+gone+" does not exist on this worker")
	assert.Contains(t, err.Error(), "connect cluster do-ams3 (kubernetes access)")
}

func TestUnknownKubeContextIsPermanentAndNamesIt(t *testing.T) {
	api := newDOAPI(t)
	t.Setenv(doEnv, doToken)
	f := doFile(t, api, "env:"+doEnv)
	f.Clusters[0].KubeContext = "staging"

	_, err := newSource(t, f).Cluster(context.Background(), "do-ams3")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "context staging")
	assert.NotContains(t, err.Error(), "kube-token-", "the kubeconfig's token must not leak")
}

// Without a kubeconfig the worker uses its pod's service account; outside a
// pod that is a clear Permanent error, not a hang or a retry loop.
func TestInClusterOutsideAPodIsPermanent(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	api := newDOAPI(t)
	t.Setenv(doEnv, doToken)
	f := mustLoad(t, fmt.Sprintf(`
clusters:
  - id: do-ams3
    provider: digitalocean
    digitalocean: {credentials: "env:%s", clusterID: %s, baseURL: %s}
`, doEnv, doCluster, api.URL))

	_, err := newSource(t, f).Cluster(context.Background(), "do-ams3")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "in-cluster service account")
}
