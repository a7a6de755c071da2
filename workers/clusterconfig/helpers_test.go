package clusterconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

// load writes body as a clusters file in a fresh folder and loads it.
func load(t *testing.T, body string) (clusterconfig.File, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clusters.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return clusterconfig.Load(path)
}

func mustLoad(t *testing.T, body string) clusterconfig.File {
	t.Helper()
	f, err := load(t, body)
	require.NoError(t, err)
	return f
}

// writeKubeconfig writes a kubeconfig with one context per server, named
// after its key, and returns its path.
func writeKubeconfig(t *testing.T, current string, servers map[string]string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for name, server := range servers {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "kube-token-" + name}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = current
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}
