package clusterconfig

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclientset "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
)

// userAgent names the worker in API server audit logs.
const userAgent = "visor-fleet-worker"

// kubeClients are one real cluster's API clients.
type kubeClients struct {
	core    k8s.Interface
	metrics metricsclientset.Interface
	events  k8s.Interface
	// dynamic reads CapacityBuffers, a CRD without a typed client here.
	dynamic dynamic.Interface
}

// restConfig reads the cluster's kubeconfig (and context), or the pod's
// service account when kubeconfig is empty. Errors name the file and
// context, never the tokens inside.
func (c ClusterSpec) restConfig() (*rest.Config, error) {
	return kubernetes.RESTConfig(c.Kubeconfig, c.KubeContext)
}

func (c ClusterSpec) kubeClients() (kubeClients, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return kubeClients{}, err
	}
	cfg = rest.AddUserAgent(cfg, userAgent)
	// A drain evicts pod by pod; client-go's default 5 QPS would make a
	// big node's drain crawl.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 20, 40
	}
	core, err := k8s.NewForConfig(cfg)
	if err != nil {
		return kubeClients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	metrics, err := metricsclientset.NewForConfig(cfg)
	if err != nil {
		return kubeClients{}, fmt.Errorf("metrics-server client: %w", err)
	}
	// Events get a client, and so a rate limiter, of their own: telling
	// pods why must never slow the observe and drain calls down.
	events, err := k8s.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return kubeClients{}, fmt.Errorf("kubernetes events client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return kubeClients{}, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	return kubeClients{core: core, metrics: metrics, events: events, dynamic: dyn}, nil
}
