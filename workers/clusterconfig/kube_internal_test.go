package clusterconfig

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestRestConfigFollowsKubeContext(t *testing.T) {
	cfg := clientcmdapi.NewConfig()
	for name, server := range map[string]string{"prod": "https://127.0.0.1:6443", "staging": "https://127.0.0.1:7443"} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "token-" + name}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = "prod"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))

	current, err := ClusterSpec{Kubeconfig: path}.restConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:6443", current.Host)
	assert.Equal(t, "token-prod", current.BearerToken)

	picked, err := ClusterSpec{Kubeconfig: path, KubeContext: "staging"}.restConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:7443", picked.Host)
	assert.Equal(t, "token-staging", picked.BearerToken)
}
