// Package metrics turns the Temporal SDK's metrics handler into Prometheus
// metrics: the SDK's own (workflow task latency, activity failures, poller
// counts, …) and the per-pool ones the pool workflow emits through
// workflow.GetMetricsHandler, which the SDK suppresses during replay.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// secondsBuckets replace OpenTelemetry's default histogram boundaries, which
// are shaped for milliseconds; every SDK timer and ours records seconds.
var secondsBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Exporter owns a Prometheus registry fed by an OpenTelemetry meter
// provider, and the Temporal metrics handler writing into it.
type Exporter struct {
	registry *prometheus.Registry
	provider *sdkmetric.MeterProvider
	handler  client.MetricsHandler
}

// New builds an exporter with its own registry (so an embedded Temporal
// server's metrics never collide with ours), plus Go runtime and process
// collectors.
func New() (*Exporter, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, err
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	seconds := sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: secondsBuckets}},
	)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(seconds))
	handler := temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter: provider.Meter("visor"),
		// Counters only ever go up; exporting them as Prometheus counters
		// (with _total) lets rate() work on them.
		UseMonotonicCounters: true,
		// A metric that cannot be created must not take the worker down.
		OnError: func(error) {},
	})
	return &Exporter{registry: reg, provider: provider, handler: handler}, nil
}

// Handler is what client.Options.MetricsHandler takes.
func (e *Exporter) Handler() client.MetricsHandler { return e.handler }

// HTTPHandler serves the registry in the Prometheus text format, every
// family with a HELP line and without the SDK's "none" labels (help.go).
func (e *Exporter) HTTPHandler() http.Handler {
	return promhttp.HandlerFor(tidyGatherer{e.registry}, promhttp.HandlerOpts{Registry: e.registry})
}

// Register adds a collector of metrics read on scrape (clusters, meter).
func (e *Exporter) Register(c prometheus.Collector) error { return e.registry.Register(c) }

// Serve listens on addr and serves /metrics until stop is called. It
// returns the address actually bound (addr may ask for port 0).
func (e *Exporter) Serve(addr string) (bound string, stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.HTTPHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Serve returns ErrServerClosed on stop; any other error means the
		// listener broke, which a scraper sees at once as a failed scrape.
		_ = srv.Serve(l)
	}()
	return l.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		_ = e.provider.Shutdown(ctx)
	}, nil
}
