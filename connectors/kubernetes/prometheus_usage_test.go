package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/types"
)

// Two clusters report nodes of the same names to one store; only the
// series carrying this cluster's metrics_label may reach its pools.
func TestPrometheusUsageReadsThisClustersNodesFromARealPrometheus(t *testing.T) {
	east := startNodeExporter(t, map[string]nodeLoad{
		"n1": {Cores: 1.5, MemoryBytes: 3 * types.GiB},
		"n2": {Cores: 0.25, MemoryBytes: 512 * types.MiB},
	})
	west := startNodeExporter(t, map[string]nodeLoad{
		"n1": {Cores: 3.5, MemoryBytes: 7 * types.GiB},
	})
	base := startPrometheus(t, scrapeTarget{east, "prom-east"}, scrapeTarget{west, "prom-west"})

	usage, err := NewPrometheusUsage(PrometheusConfig{Address: base, MetricsLabel: "prom-east", RateWindow: 5 * time.Second})
	require.NoError(t, err)

	var got map[string]types.Resources
	// The rate needs a window's worth of samples scraped every second.
	waitFor(t, 40*time.Second, "both east nodes with a full rate window", func() (bool, string) {
		got, err = usage.NodeUsage(context.Background())
		if err != nil {
			return false, err.Error()
		}
		n1 := got["n1"]
		return len(got) == 2 && n1.MilliCPU > 1400 && n1.MilliCPU < 1600, fmt.Sprint(got)
	})
	assert.InDelta(t, 1500, got["n1"].MilliCPU, 75, "1.5 cores from the counter's rate, not west's 3.5")
	assert.Equal(t, 3*types.GiB, got["n1"].Memory, "east's working set, not west's")
	assert.InDelta(t, 250, got["n2"].MilliCPU, 15)
	assert.Equal(t, 512*types.MiB, got["n2"].Memory)

	// A label no series carries is no data, not zero usage.
	nobody, err := NewPrometheusUsage(PrometheusConfig{Address: base, MetricsLabel: "prom-north", RateWindow: 5 * time.Second})
	require.NoError(t, err)
	none, err := nobody.NodeUsage(context.Background())
	require.NoError(t, err)
	assert.Empty(t, none)

	// Through the observer: the pool's node gets Usage, a node the store
	// does not know keeps it nil.
	client, _ := kubefake.NewClientset(kubefake.Options{}, []runtime.Object{
		newNode("n1", apiPool.NodePoolLabel()),
		newNode("n3", apiPool.NodePoolLabel()),
	}...)
	cfg := observerConfig(nil)
	cfg.Usage = usage
	obs, err := NewObserver(client, cfg).ObserveCluster(context.Background())
	require.NoError(t, err)
	nodes := obs.Pools[apiPool.WorkflowID()].Nodes
	require.Len(t, nodes, 2)
	require.NotNil(t, nodes[0].Usage, "n1 is in the store")
	assert.InDelta(t, 1500, nodes[0].Usage.MilliCPU, 75)
	assert.Nil(t, nodes[1].Usage, "n3 has no series: usage unknown")

	// A query Prometheus refuses is a permanent error naming the query.
	bad, err := NewPrometheusUsage(PrometheusConfig{Address: base, MetricsLabel: "prom-east", RateWindow: 5 * time.Second})
	require.NoError(t, err)
	_, err = bad.query(context.Background(), "sum by (node) (", time.Now())
	var cerr *errclass.Error
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, errclass.Permanent, cerr.Class)
}

func TestPrometheusConfigNamesEveryBadField(t *testing.T) {
	_, err := NewPrometheusUsage(PrometheusConfig{
		Address: "prometheus:9090", ClusterLabel: "clus-ter", NodeLabel: "node", CPUSeries: "cpu seconds",
		RateWindow: 10 * time.Millisecond, Timeout: -time.Second,
	})
	require.Error(t, err)
	for _, want := range []string{
		`PrometheusConfig.Address "prometheus:9090" must be an http:// or https:// URL`,
		"PrometheusConfig.MetricsLabel is empty",
		`PrometheusConfig.ClusterLabel "clus-ter" is not a valid Prometheus label name`,
		`PrometheusConfig.CPUSeries "cpu seconds" is not a valid Prometheus metric name`,
		"PrometheusConfig.RateWindow 10ms must be at least 1s",
		"PrometheusConfig.Timeout -1s is negative",
	} {
		assert.ErrorContains(t, err, want)
	}
	var cerr *errclass.Error
	require.True(t, errors.As(err, &cerr))
	assert.Equal(t, errclass.Permanent, cerr.Class)
}

func TestPrometheusQueriesSelectTheMetricsLabelQuoted(t *testing.T) {
	p, err := NewPrometheusUsage(PrometheusConfig{Address: "http://127.0.0.1:9090", MetricsLabel: `east"} or vector(1) #`})
	require.NoError(t, err)
	cpu, mem := p.Queries()
	assert.Equal(t, `sum by (node) (rate(node_cpu_usage_seconds_total{cluster="east\"} or vector(1) #"}[2m]))`, cpu)
	assert.Equal(t, `sum by (node) (node_memory_working_set_bytes{cluster="east\"} or vector(1) #"})`, mem)
}

func TestPrometheusUsageSendsTheResolvedBearerToken(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"node":"n1"},"value":[1,"2"]}]}}`)
	}))
	defer srv.Close()
	t.Setenv("VISOR_TEST_PROM_TOKEN", "s3cret\n")
	p, err := NewPrometheusUsage(PrometheusConfig{Address: srv.URL, MetricsLabel: "east", BearerToken: "env:VISOR_TEST_PROM_TOKEN"})
	require.NoError(t, err)
	got, err := p.NodeUsage(context.Background())
	require.NoError(t, err)
	assert.Equal(t, map[string]types.Resources{"n1": {MilliCPU: 2000, Memory: 2}}, got)
	assert.Equal(t, []string{"Bearer s3cret", "Bearer s3cret"}, seen)

	// A reference that does not resolve fails the read, naming the reference.
	p, err = NewPrometheusUsage(PrometheusConfig{Address: srv.URL, MetricsLabel: "east", BearerToken: "env:VISOR_TEST_PROM_UNSET"})
	require.NoError(t, err)
	_, err = p.NodeUsage(context.Background())
	assert.ErrorContains(t, err, "env:VISOR_TEST_PROM_UNSET")
	assert.NotContains(t, err.Error(), "s3cret")
}
