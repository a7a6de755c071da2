package kubernetes

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig reads a kubeconfig (and context), or the pod's service
// account when kubeconfig is empty. Errors name the file and context,
// never the tokens inside.
func RESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig is empty, so the worker's in-cluster service account is used, but: %w", err)
		}
		return cfg, nil
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("kubeconfig %s does not exist on this worker", kubeconfig)
		}
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		where := "kubeconfig " + kubeconfig
		if kubeContext != "" {
			where += " context " + kubeContext
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}
