package clusterconfig_test

// Against a real control plane (testsuite/kubeapi): the worker reaches the
// cluster through a kubeconfig file and context, authenticated as the
// connector user bound to the shipped ClusterRole, reads a secret: credential
// from that cluster, and observes its nodes. Skipped with a message naming
// the build script when the binaries are not cached (failed when CI=true).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m, kubeapi.Options{})) }

// kubeconfigFor writes cfg as a kubeconfig whose only context is "visor",
// next to a current context that points nowhere, so the test proves the
// context is honoured.
func kubeconfigFor(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["real"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	kc.AuthInfos["connector"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["visor"] = &clientcmdapi.Context{Cluster: "real", AuthInfo: "connector"}
	kc.Contexts["other"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: "connector"}
	kc.CurrentContext = "other"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

func TestRealClusterThroughKubeconfigWithSecretCredential(t *testing.T) {
	cluster := kubeapi.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := k8s.NewForConfigOrDie(cluster.AdminConfig)

	ns := fmt.Sprintf("visor-cc-%d", time.Now().UnixNano()%1_000_000)
	require.NoError(t, kubeapi.EnsureNamespace(ctx, admin, ns))
	_, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "do-api", Namespace: ns},
		Data:       map[string][]byte{"token": []byte(doToken + "\n")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	node := ns + "-node-1"
	_, err = kubeapi.CreateNode(ctx, admin, kubeapi.Node(node, "4", "16Gi", 110, map[string]string{types.LabelPool: doPool.NodePoolLabel()}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })

	api := newDOAPI(t)
	api.AddPool(doCluster, godo.KubernetesNodePoolCreateRequest{
		Name: "api-pool", Size: "s-4vcpu-8gb", Count: 1,
		Labels: map[string]string{types.LabelPool: doPool.NodePoolLabel()},
	})
	f := doFile(t, api, "secret:"+ns+"/do-api/token")
	f.Clusters[0].Kubeconfig = kubeconfigFor(t, cluster.ConnectorConfig)
	f.Clusters[0].KubeContext = "visor"
	src := newSource(t, f)

	c, err := src.Cluster(ctx, "do-ams3")
	require.NoError(t, err, "the DigitalOcean token is read from the cluster's secret")
	groups, err := c.Provider.NodeGroups(ctx, doPool)
	require.NoError(t, err)
	assert.Len(t, groups, 1)

	obs, err := c.Observer.ObserveCluster(ctx)
	require.NoError(t, err)
	nodes := obs.Pools[doPool.WorkflowID()].Nodes
	require.Len(t, nodes, 1)
	assert.Equal(t, node, nodes[0].Name)

	t.Run("informers observe the same nodes from a cache the source stops", func(t *testing.T) {
		f := doFile(t, api, "secret:"+ns+"/do-api/token")
		f.Clusters[0].Kubeconfig = kubeconfigFor(t, cluster.ConnectorConfig)
		f.Clusters[0].KubeContext = "visor"
		f.Clusters[0].Informers = true
		src := newSource(t, f)
		c, err := src.Cluster(ctx, "do-ams3")
		require.NoError(t, err)
		obs, err := c.Observer.ObserveCluster(ctx)
		require.NoError(t, err)
		nodes := obs.Pools[doPool.WorkflowID()].Nodes
		require.Len(t, nodes, 1)
		assert.Equal(t, node, nodes[0].Name)
		require.NoError(t, src.Close(ctx), "closing the source stops the informers")
	})

	t.Run("missing secret key is Permanent and named", func(t *testing.T) {
		f := doFile(t, api, "secret:"+ns+"/do-api/nope")
		f.Clusters[0].Kubeconfig = kubeconfigFor(t, cluster.ConnectorConfig)
		f.Clusters[0].KubeContext = "visor"
		_, err := newSource(t, f).Cluster(ctx, "do-ams3")
		require.Error(t, err)
		assert.True(t, errclass.IsPermanent(err), "%v", err)
		assert.Contains(t, err.Error(), "secret:"+ns+"/do-api/nope")
		assert.NotContains(t, err.Error(), doToken)
	})
}
