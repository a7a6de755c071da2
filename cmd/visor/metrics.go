package main

import (
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/internal/metrics"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
)

// metricsServer is the Prometheus endpoint of `visor worker` and `visor dev`.
type metricsServer struct {
	// Handler goes into client.Options.MetricsHandler: the SDK's metrics
	// and the pool workflows' per-pool metrics flow through it.
	Handler client.MetricsHandler
	// Addr is the address bound ("" when metrics are off).
	Addr string
	Stop func()

	exporter *metrics.Exporter
}

// watchFleet adds the cluster and meter metrics, read on each scrape
// through c (and ledger, when this process writes one). A no-op when
// metrics are off.
func (m *metricsServer) watchFleet(c client.Client, ledger *meterledger.Ledger) error {
	if m.exporter == nil {
		return nil
	}
	return m.exporter.Register(newFleetCollector(c, ledger))
}

// newMetrics serves Prometheus metrics on addr; with addr "" nothing
// listens and the handler is the SDK's no-op one.
func newMetrics(addr string) (*metricsServer, error) {
	if addr == "" {
		return &metricsServer{Handler: client.MetricsNopHandler, Stop: func() {}}, nil
	}
	e, err := metrics.New()
	if err != nil {
		return nil, err
	}
	bound, stop, err := e.Serve(addr)
	if err != nil {
		return nil, err
	}
	return &metricsServer{Handler: e.Handler(), Addr: bound, Stop: stop, exporter: e}, nil
}
