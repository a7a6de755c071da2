package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// UsageSource reads what each node actually uses, keyed by node name. A
// node missing from the answer has unknown usage: the observer leaves its
// Usage nil rather than guessing.
type UsageSource interface {
	NodeUsage(ctx context.Context) (map[string]types.Resources, error)
}

// Defaults of PrometheusConfig. The series are the kubelet's resource
// metrics (/metrics/resource), the ones metrics-server itself reads, so
// both sources report the same numbers.
const (
	DefaultClusterLabel = "cluster"
	DefaultNodeLabel    = "node"
	DefaultRateWindow   = 2 * time.Minute
	DefaultCPUSeries    = "node_cpu_usage_seconds_total"
	DefaultMemorySeries = "node_memory_working_set_bytes"
	defaultQueryTimeout = 10 * time.Second
)

// PrometheusConfig says where the central metrics store is and which of its
// series belong to this cluster: those whose ClusterLabel equals the
// cluster's declared metrics_label.
type PrometheusConfig struct {
	// Address is the store's base URL (Prometheus, Thanos, Mimir, VictoriaMetrics...).
	Address string
	// MetricsLabel is the cluster's declared metrics_label value.
	MetricsLabel string
	// ClusterLabel is the label name that carries it; default "cluster".
	ClusterLabel string
	// NodeLabel is the label naming the node; default "node".
	NodeLabel string
	// CPUSeries is a counter of CPU seconds per node; default node_cpu_usage_seconds_total.
	CPUSeries string
	// MemorySeries is a gauge of bytes in use per node; default node_memory_working_set_bytes.
	MemorySeries string
	// RateWindow is the range of the CPU rate; default 2m.
	RateWindow time.Duration
	// BearerToken, when set, is a reference to the store's token, resolved
	// on the worker at query time.
	BearerToken connectors.CredentialRef
	// Secrets resolves secret: references in BearerToken.
	Secrets connectors.SecretReader
	// Transport is the HTTP transport; nil means the client's default.
	Transport http.RoundTripper
	// Timeout bounds each query; default 10s.
	Timeout time.Duration
}

// PrometheusUsage reads node usage from a Prometheus-compatible HTTP API.
type PrometheusUsage struct {
	api          promv1.API
	cfg          PrometheusConfig
	cpuQuery     string
	memoryQuery  string
	clusterMatch string
}

var _ UsageSource = (*PrometheusUsage)(nil)

// NewPrometheusUsage checks cfg and returns the source. Errors name the field.
func NewPrometheusUsage(cfg PrometheusConfig) (*PrometheusUsage, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, errclass.New(errclass.Permanent, providerName, "prometheus usage", err)
	}
	transport := cfg.Transport
	if transport == nil {
		transport = promapi.DefaultRoundTripper
	}
	if cfg.BearerToken != "" {
		transport = bearerTransport{ref: cfg.BearerToken, secrets: cfg.Secrets, next: transport}
	}
	client, err := promapi.NewClient(promapi.Config{Address: cfg.Address, RoundTripper: transport})
	if err != nil {
		return nil, errclass.New(errclass.Permanent, providerName, "prometheus usage", fmt.Errorf("PrometheusConfig.Address: %w", err))
	}
	match := fmt.Sprintf("%s=%s", cfg.ClusterLabel, strconv.Quote(cfg.MetricsLabel))
	return &PrometheusUsage{
		api:          promv1.NewAPI(client),
		cfg:          cfg,
		clusterMatch: match,
		cpuQuery: fmt.Sprintf("sum by (%s) (rate(%s{%s}[%s]))",
			cfg.NodeLabel, cfg.CPUSeries, match, model.Duration(cfg.RateWindow)),
		memoryQuery: fmt.Sprintf("sum by (%s) (%s{%s})", cfg.NodeLabel, cfg.MemorySeries, match),
	}, nil
}

func (c *PrometheusConfig) defaults() {
	if c.ClusterLabel == "" {
		c.ClusterLabel = DefaultClusterLabel
	}
	if c.NodeLabel == "" {
		c.NodeLabel = DefaultNodeLabel
	}
	if c.CPUSeries == "" {
		c.CPUSeries = DefaultCPUSeries
	}
	if c.MemorySeries == "" {
		c.MemorySeries = DefaultMemorySeries
	}
	if c.RateWindow == 0 {
		c.RateWindow = DefaultRateWindow
	}
	if c.Timeout == 0 {
		c.Timeout = defaultQueryTimeout
	}
}

func (c PrometheusConfig) validate() error {
	var problems []error
	if u, err := url.Parse(c.Address); c.Address == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, fmt.Errorf("PrometheusConfig.Address %q must be an http:// or https:// URL", c.Address))
	}
	if c.MetricsLabel == "" {
		problems = append(problems, errors.New("PrometheusConfig.MetricsLabel is empty: it is the cluster's declared metrics_label"))
	}
	for _, l := range [][2]string{{"ClusterLabel", c.ClusterLabel}, {"NodeLabel", c.NodeLabel}} {
		if !model.LegacyValidation.IsValidLabelName(l[1]) {
			problems = append(problems, fmt.Errorf("PrometheusConfig.%s %q is not a valid Prometheus label name", l[0], l[1]))
		}
	}
	for _, m := range [][2]string{{"CPUSeries", c.CPUSeries}, {"MemorySeries", c.MemorySeries}} {
		if !model.LegacyValidation.IsValidMetricName(m[1]) {
			problems = append(problems, fmt.Errorf("PrometheusConfig.%s %q is not a valid Prometheus metric name", m[0], m[1]))
		}
	}
	// A range shorter than a second is not a PromQL duration.
	if c.RateWindow < time.Second {
		problems = append(problems, fmt.Errorf("PrometheusConfig.RateWindow %v must be at least 1s", c.RateWindow))
	}
	if c.Timeout < 0 {
		problems = append(problems, fmt.Errorf("PrometheusConfig.Timeout %v is negative", c.Timeout))
	}
	return errors.Join(problems...)
}

// Queries are the PromQL expressions the source runs (CPU, memory).
func (p *PrometheusUsage) Queries() (cpu, memory string) { return p.cpuQuery, p.memoryQuery }

// NodeUsage runs the CPU and memory queries at now. A node gets usage only
// when both answer for it: half a reading is no reading.
func (p *PrometheusUsage) NodeUsage(ctx context.Context) (map[string]types.Resources, error) {
	now := time.Now()
	cores, err := p.query(ctx, p.cpuQuery, now)
	if err != nil {
		return nil, err
	}
	bytes, err := p.query(ctx, p.memoryQuery, now)
	if err != nil {
		return nil, err
	}
	usage := make(map[string]types.Resources, len(cores))
	for node, c := range cores {
		m, ok := bytes[node]
		if !ok {
			continue
		}
		usage[node] = types.Resources{MilliCPU: int64(math.Round(c * 1000)), Memory: int64(math.Round(m))}
	}
	return usage, nil
}

// query returns one value per node of an instant vector; samples without
// the node label, or not finite, are skipped.
func (p *PrometheusUsage) query(ctx context.Context, q string, at time.Time) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	value, _, _, err := p.api.Query(ctx, q, at, promv1.WithTimeout(p.cfg.Timeout))
	if err != nil {
		return nil, prometheusError(q, err)
	}
	vector, ok := value.(model.Vector)
	if !ok {
		return nil, errclass.New(errclass.Permanent, providerName, "prometheus query "+q, fmt.Errorf("answer is a %s, not an instant vector", value.Type()))
	}
	out := make(map[string]float64, len(vector))
	for _, s := range vector {
		node := string(s.Metric[model.LabelName(p.cfg.NodeLabel)])
		v := float64(s.Value)
		if node == "" || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			continue
		}
		out[node] = v
	}
	return out, nil
}

// prometheusError classes a failed query: a bad query or a refused token
// does not heal by retrying, the rest may.
func prometheusError(q string, err error) error {
	var typed *errclass.Error
	if errors.As(err, &typed) {
		return err
	}
	class := errclass.Retryable
	var apiErr *promv1.Error
	if errors.As(err, &apiErr) && (apiErr.Type == promv1.ErrBadData || apiErr.Type == promv1.ErrBadResponse) {
		class = errclass.Permanent
	}
	return errclass.New(class, providerName, "prometheus query "+q, err)
}

// bearerTransport adds the store's token, resolved per request so a rotated
// secret is picked up without a restart.
type bearerTransport struct {
	ref     connectors.CredentialRef
	secrets connectors.SecretReader
	next    http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	token, err := b.ref.Resolve(r.Context(), b.secrets)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return b.next.RoundTrip(r)
}
