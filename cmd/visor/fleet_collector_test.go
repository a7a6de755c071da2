package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
)

// The worker's metrics endpoint shows each cluster's reachability, phase
// and observation age, read from the cluster workflows on scrape.
func TestClusterMetricsOnScrape(t *testing.T) {
	cluster := map[string]string{"cluster": "sim-cli"}
	eventually(t, 30*time.Second, "sim-cli reachable in the metrics", func() error {
		text := scrapeMetrics(t)
		if v, ok := sample(text, "visor_cluster_reachable", map[string]string{"cluster": "sim-cli", "provider": "sim", "region": "us-east"}); !ok || v != 1 {
			return fmt.Errorf("visor_cluster_reachable = %v (found %v)", v, ok)
		}
		return nil
	})
	text := scrapeMetrics(t)
	active, ok := sample(text, "visor_cluster_phase", map[string]string{"cluster": "sim-cli", "phase": "active"})
	require.True(t, ok)
	require.Equal(t, 1.0, active)
	draining, ok := sample(text, "visor_cluster_phase", map[string]string{"cluster": "sim-cli", "phase": "draining"})
	require.True(t, ok)
	require.Equal(t, 0.0, draining)
	age, ok := sample(text, "visor_cluster_observation_age_seconds", cluster)
	require.True(t, ok)
	require.Less(t, age, 60.0)
	pools, ok := sample(text, "visor_cluster_pools", cluster)
	require.True(t, ok)
	require.GreaterOrEqual(t, pools, 3.0)
	require.Contains(t, text, "# HELP visor_cluster_reachable 1 when the cluster's watcher reaches it")
	require.NotContains(t, text, `activity_type="none"`)
}

// Node-hours come from the ledger, per org, pool and size.
func TestMeterMetricsFromTheLedger(t *testing.T) {
	path, _ := ledgerWith(t)
	l, err := meterledger.Open(path)
	require.NoError(t, err)
	defer l.Close()
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(newFleetCollector(env.client, l)))
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.Metric {
			if f.GetName() != "visor_meter_node_hours_total" {
				continue
			}
			labels := map[string]string{}
			for _, lp := range m.Label {
				labels[lp.GetName()] = lp.GetValue()
			}
			got[labels["pool"]+" "+labels["size"]] = m.GetCounter().GetValue()
		}
	}
	require.Equal(t, map[string]float64{
		"pool/acme/web/api/sim/east sim-small":    4.5,
		"pool/acme/web/api/sim/east sim-large":    1,
		"pool/globex/ml/train/sim/east sim-small": 3,
	}, got)
}
