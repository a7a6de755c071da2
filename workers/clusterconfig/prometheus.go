package clusterconfig

import (
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

// PrometheusUsage reads a cluster's node usage from the central metrics
// store (Prometheus or a compatible one) instead of metrics-server: the
// series whose cluster label is the cluster's declared metrics_label.
type PrometheusUsage struct {
	// Address is the store's base URL.
	Address string `json:"address"`
	// MetricsLabel is the cluster's declared metrics_label; default its id
	// (what `visor cluster enroll` declares when none is given).
	MetricsLabel string `json:"metricsLabel,omitempty"`
	// ClusterLabel and NodeLabel name the labels; defaults cluster and node.
	ClusterLabel string `json:"clusterLabel,omitempty"`
	NodeLabel    string `json:"nodeLabel,omitempty"`
	// CPUSeries and MemorySeries default to the kubelet's resource metrics.
	CPUSeries    string `json:"cpuSeries,omitempty"`
	MemorySeries string `json:"memorySeries,omitempty"`
	// RateWindow of the CPU rate; default 2m.
	RateWindow types.Duration `json:"rateWindow,omitempty"`
	// BearerToken references the store's token, if it wants one.
	BearerToken connectors.CredentialRef `json:"bearerToken,omitempty"`
}

// config is the connector's configuration for cluster id.
func (p PrometheusUsage) config(id string, secrets connectors.SecretReader) kubernetes.PrometheusConfig {
	label := p.MetricsLabel
	if label == "" {
		label = id
	}
	return kubernetes.PrometheusConfig{
		Address: p.Address, MetricsLabel: label, ClusterLabel: p.ClusterLabel, NodeLabel: p.NodeLabel,
		CPUSeries: p.CPUSeries, MemorySeries: p.MemorySeries, RateWindow: p.RateWindow.D(),
		BearerToken: p.BearerToken, Secrets: secrets,
	}
}

// validate checks the section as the connector will, without a network call.
func (p PrometheusUsage) validate(ps *problems, id string) {
	checkRef(ps, "prometheus.bearerToken", p.BearerToken, false)
	if _, err := kubernetes.NewPrometheusUsage(p.config(id, nil)); err != nil {
		ps.add("prometheus", "%v", err)
	}
}
