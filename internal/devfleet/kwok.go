package devfleet

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/kwok"
)

// KwokCluster is a cluster on a real API server whose nodes kwok manages:
// the kwok provider buys nodes with providerAPI's rights (nodes and its
// record namespace), and the pool observes (informers) and drains with
// connectorAPI's, as a worker with the shipped ClusterRole would. The
// provider's reconciler runs until release is called.
func KwokCluster(id string, providerAPI, connectorAPI *rest.Config, cfg kwok.Config, logger *slog.Logger) (connectors.Cluster, func(context.Context) error, error) {
	pc, err := k8s.NewForConfig(providerAPI)
	if err != nil {
		return connectors.Cluster{}, nil, fmt.Errorf("kwok cluster %s: provider client: %w", id, err)
	}
	cc, err := k8s.NewForConfig(connectorAPI)
	if err != nil {
		return connectors.Cluster{}, nil, fmt.Errorf("kwok cluster %s: connector client: %w", id, err)
	}
	p, err := kwok.New(cfg, pc, kwok.Options{Logger: logger})
	if err != nil {
		return connectors.Cluster{}, nil, fmt.Errorf("kwok cluster %s: %w", id, err)
	}
	stopReconciler := p.Start()
	dyn, err := dynamic.NewForConfig(connectorAPI)
	if err != nil {
		return connectors.Cluster{}, nil, fmt.Errorf("kwok cluster %s: dynamic client: %w", id, err)
	}
	observer := kubernetes.NewObserver(cc, kubernetes.Config{Cluster: id, Provider: kwok.ProviderName, Informers: true, Dynamic: dyn})
	// Events have a client (and rate limiter) of their own, so telling
	// pods why never slows observing and draining.
	ec, err := k8s.NewForConfig(connectorAPI)
	if err != nil {
		return connectors.Cluster{}, nil, fmt.Errorf("kwok cluster %s: events client: %w", id, err)
	}
	events := kubernetes.NewEventRecorder(ec)
	release := func(ctx context.Context) error {
		events.Close()
		err := observer.Close(ctx)
		if e := stopReconciler(ctx); err == nil {
			err = e
		}
		return err
	}
	return connectors.Cluster{
		ID:       id,
		Provider: connectors.Checked(p),
		Observer: observer,
		Drainer:  kubernetes.NewDrainer(cc, kubernetes.DrainerConfig{}),
		Events:   events,
	}, release, nil
}
