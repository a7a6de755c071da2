package clusterconfig

import (
	"errors"
	"fmt"
	"os"

	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	metricsclientset "k8s.io/metrics/pkg/client/clientset/versioned"
)

// userAgent names the worker in API server audit logs.
const userAgent = "visor-fleet-worker"

// kubeClients are one real cluster's API clients.
type kubeClients struct {
	core    k8s.Interface
	metrics metricsclientset.Interface
}

// restConfig reads the cluster's kubeconfig (and context), or the pod's
// service account when kubeconfig is empty. Errors name the file and
// context, never the tokens inside.
func (c ClusterSpec) restConfig() (*rest.Config, error) {
	if c.Kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig is empty, so the worker's in-cluster service account is used, but: %w", err)
		}
		return cfg, nil
	}
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("kubeconfig %s does not exist on this worker", c.Kubeconfig)
		}
		return nil, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: c.KubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		where := "kubeconfig " + c.Kubeconfig
		if c.KubeContext != "" {
			where += " context " + c.KubeContext
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
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
	return kubeClients{core: core, metrics: metrics}, nil
}
