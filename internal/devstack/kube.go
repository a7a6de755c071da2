package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors/kwok"
	"github.com/hanzoai/visor-fleet/deploy/rbac"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/kubeplane"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

// Kube is the real control plane `visor dev --kube` runs its kwok clusters
// on: etcd, kube-apiserver, kube-controller-manager (disruption,
// replicaset, daemonset), kube-scheduler and kwok from the binary cache.
type Kube struct {
	// Kubeconfig is an admin kubeconfig for kubectl.
	Kubeconfig string
	// Clusters are the spec's kwok clusters, for Options.Clusters.
	Clusters workers.StaticClusters

	plane   *kubeplane.Cluster
	release []func(context.Context) error
	stop    context.CancelFunc
}

// KubeBootDelay is how long a dev kwok machine takes to become a node.
const KubeBootDelay = 5 * time.Second

// StartKube starts the control plane, serves every kwok cluster of the
// spec on it and drives the demo demand of their pools. Missing binaries
// are an error naming the build script.
func StartKube(ctx context.Context, spec starter.SpecFile, stateDir string, logger *slog.Logger) (*Kube, error) {
	if _, err := kubeplane.FindBinaries(kubeplane.SchedulerBinary, kubeplane.KwokBinary); err != nil {
		return nil, fmt.Errorf("visor dev --kube: %w", err)
	}
	plane, err := kubeplane.Start(ctx, kubeplane.Options{
		ClusterRoleYAML: rbac.ClusterRole, Scheduler: true, Kwok: true,
		Controllers: []string{"disruption", "replicaset", "daemonset"},
	})
	if err != nil {
		return nil, err
	}
	k := &Kube{Kubeconfig: filepath.Join(stateDir, "kubeconfig"), Clusters: workers.StaticClusters{}, plane: plane}
	ok := false
	defer func() {
		if !ok {
			k.Stop()
		}
	}()
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	if err := plane.WriteAdminKubeconfig(k.Kubeconfig); err != nil {
		return nil, err
	}
	var pools []starter.PoolEntry
	for _, c := range spec.Clusters {
		if c.Provider != kwok.ProviderName {
			continue
		}
		cluster, release, err := devfleet.KwokCluster(c.ID, plane.AdminConfig, plane.ConnectorConfig, kwok.Config{BootDelay: types.Duration(KubeBootDelay), Region: c.Region}, logger)
		if err != nil {
			return nil, err
		}
		k.Clusters[c.ID], k.release = cluster, append(k.release, release)
		for _, p := range spec.Pools {
			if p.Key.Cluster == c.ID {
				pools = append(pools, p)
			}
		}
	}
	if len(k.Clusters) == 0 {
		return nil, fmt.Errorf("visor dev --kube: the spec declares no cluster with provider %q", kwok.ProviderName)
	}
	admin, err := k8s.NewForConfig(plane.AdminConfig)
	if err != nil {
		return nil, err
	}
	demandCtx, stop := context.WithCancel(context.Background())
	k.stop = stop
	go devfleet.KwokDemand(demandCtx, admin, pools, 2*time.Second, logger)
	ok = true
	return k, nil
}

// Stop ends the demand, the kwok providers and the control plane (its
// data goes with it: the cluster is throwaway, the pools' state is not).
func (k *Kube) Stop() {
	if k.stop != nil {
		k.stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range k.release {
		_ = r(ctx)
	}
	if k.plane != nil {
		k.plane.Stop()
	}
}
