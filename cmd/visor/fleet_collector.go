package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/metrics"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
)

// fleetCollector reads clusters and the meter ledger when Prometheus
// scrapes: their state lives in cluster workflows and SQLite, not in any
// worker's memory, so it is read fresh rather than emitted. One
// visibility listing and one status query per cluster per scrape.
type fleetCollector struct {
	client  client.Client
	ledger  *meterledger.Ledger // nil: no meter metrics
	timeout time.Duration
	now     func() time.Time

	statusErrors prometheus.Counter
}

var (
	descReachable = prometheus.NewDesc("visor_cluster_reachable", metrics.HelpFor("visor_cluster_reachable"), []string{"cluster", "provider", "region"}, nil)
	descPhase     = prometheus.NewDesc("visor_cluster_phase", metrics.HelpFor("visor_cluster_phase"), []string{"cluster", "phase"}, nil)
	descObsAge    = prometheus.NewDesc("visor_cluster_observation_age_seconds", metrics.HelpFor("visor_cluster_observation_age_seconds"), []string{"cluster"}, nil)
	descPools     = prometheus.NewDesc("visor_cluster_pools", metrics.HelpFor("visor_cluster_pools"), []string{"cluster"}, nil)
	descNodeHours = prometheus.NewDesc("visor_meter_node_hours_total", metrics.HelpFor("visor_meter_node_hours_total"), []string{"org", "pool", "size"}, nil)
	descHours     = prometheus.NewDesc("visor_meter_hours_total", metrics.HelpFor("visor_meter_hours_total"), []string{"org", "pool", "size"}, nil)
)

var clusterPhases = []contract.ClusterPhase{contract.PhasePending, contract.PhaseActive, contract.PhaseDraining, contract.PhaseDisabled}

func newFleetCollector(c client.Client, ledger *meterledger.Ledger) *fleetCollector {
	return &fleetCollector{
		client: c, ledger: ledger, timeout: 5 * time.Second, now: time.Now,
		statusErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "visor_cluster_status_errors_total", Help: metrics.HelpFor("visor_cluster_status_errors_total")}),
	}
}

func (f *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReachable, descPhase, descObsAge, descPools, descNodeHours, descHours} {
		ch <- d
	}
	f.statusErrors.Describe(ch)
}

func (f *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	f.collectClusters(ctx, ch)
	f.collectMeter(ctx, ch)
	f.statusErrors.Collect(ch)
}

func (f *fleetCollector) collectClusters(ctx context.Context, ch chan<- prometheus.Metric) {
	clusters, err := starter.ListClusters(ctx, f.client, true)
	if err != nil {
		f.statusErrors.Inc()
		return
	}
	for _, e := range clusters {
		d := e.Declared
		for _, p := range clusterPhases {
			ch <- prometheus.MustNewConstMetric(descPhase, prometheus.GaugeValue, boolValue(d.Phase == p), e.ID, string(p))
		}
		if e.Status == nil {
			f.statusErrors.Inc()
			continue
		}
		o := e.Status.Observed
		ch <- prometheus.MustNewConstMetric(descReachable, prometheus.GaugeValue, boolValue(o.Reachable), e.ID, d.Provider, d.Region)
		ch <- prometheus.MustNewConstMetric(descPools, prometheus.GaugeValue, float64(len(e.Status.Pools)), e.ID)
		if !o.LastSyncAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(descObsAge, prometheus.GaugeValue, f.now().Sub(o.LastSyncAt).Seconds(), e.ID)
		}
	}
}

func (f *fleetCollector) collectMeter(ctx context.Context, ch chan<- prometheus.Metric) {
	if f.ledger == nil {
		return
	}
	totals, err := f.ledger.Totals(ctx, meterledger.Filter{})
	if err != nil {
		return
	}
	for _, t := range totals {
		// A BYO pool's management-plane pool-hours are hours, not node-hours.
		if t.MeterID == metering.MeterNodeHours {
			ch <- prometheus.MustNewConstMetric(descNodeHours, prometheus.CounterValue, t.Value, t.Org, t.Pool, t.Size)
		}
		ch <- prometheus.MustNewConstMetric(descHours, prometheus.CounterValue, float64(t.Hours), t.Org, t.Pool, t.Size)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
