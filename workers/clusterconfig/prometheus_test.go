package clusterconfig_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

func TestPrometheusSectionIsCheckedAtLoad(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    digitalocean: {credentials: "env:DO_TOKEN", clusterID: x}
    prometheus: {address: "prometheus:9090", nodeLabel: "node-name", bearerToken: "hunter2"}
  - id: lab
    provider: sim
    prometheus: {address: "http://prometheus:9090"}
`)
	require.Error(t, err)
	got := problemFields(t, err)
	assert.Contains(t, got["do-ams3/prometheus"], `PrometheusConfig.Address "prometheus:9090" must be an http:// or https:// URL`)
	assert.Contains(t, got["do-ams3/prometheus"], `PrometheusConfig.NodeLabel "node-name"`)
	assert.Contains(t, got["do-ams3/prometheus.bearerToken"], "is not a reference")
	assert.NotContains(t, err.Error(), "hunter2")
	assert.Contains(t, got["lab/prometheus"], "sim cluster has no metrics store")

	f := mustLoad(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    digitalocean: {credentials: "env:DO_TOKEN", clusterID: x}
    prometheus: {address: "https://metrics.internal", rateWindow: 5m, bearerToken: "file:prom.token"}
`)
	p := f.Clusters[0].Prometheus
	require.NotNil(t, p)
	assert.Equal(t, types.Duration(5*time.Minute), p.RateWindow)
	assert.Equal(t, "file:"+filepath.Join(filepath.Dir(f.Path), "prom.token"), string(p.BearerToken), "relative to the clusters file")
}

// A cluster with a prometheus section observes node usage from the store,
// selected by its metrics_label (its id by default), not from metrics-server.
func TestPrometheusSectionFeedsTheObserversNodeUsage(t *testing.T) {
	cluster := kubeapi.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := k8s.NewForConfigOrDie(cluster.AdminConfig)
	node := fmt.Sprintf("visor-prom-%d", time.Now().UnixNano()%1_000_000)
	_, err := kubeapi.CreateNode(ctx, admin, kubeapi.Node(node, "4", "16Gi", 110, map[string]string{types.LabelPool: doPool.NodePoolLabel()}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })

	// The store's HTTP API, answering this node's usage to queries that
	// select the cluster's label.
	var mu sync.Mutex
	var queries []string
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		q := r.Form.Get("query")
		mu.Lock()
		queries = append(queries, q)
		mu.Unlock()
		value := "1.25"
		if strings.Contains(q, "memory") {
			value = "2147483648"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"node":%q},"value":[%d,%q]}]}}`, node, time.Now().Unix(), value)
	}))
	defer store.Close()

	api := newDOAPI(t)
	f := doFile(t, api, "env:VISOR_TEST_DO_TOKEN")
	t.Setenv("VISOR_TEST_DO_TOKEN", doToken)
	f.Clusters[0].Kubeconfig = kubeconfigFor(t, cluster.ConnectorConfig)
	f.Clusters[0].KubeContext = "visor"
	f.Clusters[0].Prometheus = &clusterconfig.PrometheusUsage{Address: store.URL}
	require.NoError(t, f.Validate())
	c, err := newSource(t, f).Cluster(ctx, "do-ams3")
	require.NoError(t, err)

	obs, err := c.Observer.ObserveCluster(ctx)
	require.NoError(t, err)
	var got *types.Resources
	for _, n := range obs.Pools[doPool.WorkflowID()].Nodes {
		if n.Name == node {
			got = n.Usage
		}
	}
	require.NotNil(t, got, "usage from the store")
	assert.Equal(t, types.Resources{MilliCPU: 1250, Memory: 2 * types.GiB}, *got)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, queries, 2)
	for _, q := range queries {
		assert.Contains(t, q, `cluster="do-ams3"`, "metrics_label defaults to the cluster id")
	}
}
