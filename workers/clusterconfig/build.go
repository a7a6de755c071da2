package clusterconfig

import (
	"context"
	"errors"
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/connectors/vsphere"
)

// built is one cluster's connectors and how to release them.
type built struct {
	cluster connectors.Cluster
	// release frees what the connectors hold (a vCenter session, a running
	// simulation); nil when there is nothing.
	release func(context.Context) error
}

// build makes a cluster's connectors. It runs inside an activity, so the
// credentials it resolves stay on this worker.
func (s *Source) build(ctx context.Context, spec ClusterSpec) (built, error) {
	if spec.Provider == Sim {
		return s.buildSim(spec)
	}
	kube, err := spec.kubeClients()
	if err != nil {
		return built{}, connectError(spec, "kubernetes", "kubernetes access", err)
	}
	secrets := kubernetes.NewSecretReader(kube.core)
	observe := kubernetes.Config{Cluster: spec.ID, Provider: spec.Provider, Metrics: kube.metrics, Informers: spec.Informers}
	if spec.Prometheus != nil {
		usage, err := kubernetes.NewPrometheusUsage(spec.Prometheus.config(spec.ID, secrets))
		if err != nil {
			return built{}, connectError(spec, "kubernetes", "prometheus usage", err)
		}
		observe.Usage = usage
	}
	provider, releaseProvider, err := newProvider(ctx, spec, secrets)
	if err != nil {
		return built{}, connectError(spec, spec.Provider, "provider", err)
	}
	observer := kubernetes.NewObserver(kube.core, observe)
	release := func(ctx context.Context) error {
		err := observer.Close(ctx) // stops the informers, if any
		if releaseProvider != nil {
			err = errors.Join(err, releaseProvider(ctx))
		}
		return err
	}
	return built{
		cluster: connectors.Cluster{
			ID:       spec.ID,
			Provider: provider,
			Observer: observer,
			Drainer:  kubernetes.NewDrainer(kube.core, kubernetes.DrainerConfig{}),
			// Resolved by the watcher when it reports; relative file
			// references were made absolute when the file was loaded.
			EnrollmentToken: spec.EnrollmentToken,
		},
		release: release,
	}, nil
}

// newProvider calls the named provider package's New; secrets reads
// secret: references from the cluster's own API.
func newProvider(ctx context.Context, spec ClusterSpec, secrets connectors.SecretReader) (connectors.Provider, func(context.Context) error, error) {
	switch spec.Provider {
	case DigitalOcean:
		return noRelease(digitalocean.New(ctx, *spec.DigitalOcean, secrets))
	case AWS:
		return noRelease(aws.New(ctx, *spec.AWS, secrets))
	case Hetzner:
		return noRelease(hetzner.New(ctx, *spec.Hetzner, secrets))
	case VSphere:
		p, err := vsphere.New(ctx, *spec.VSphere, secrets)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Close, nil
	}
	// Validate rejects any other kind; reaching here means an unvalidated File.
	return nil, nil, fmt.Errorf("provider %q is not one this worker can build", spec.Provider)
}

// noRelease adapts a New whose provider holds nothing to release. It also
// keeps a failed New from yielding a non-nil interface around a nil pointer.
func noRelease[P connectors.Provider](p P, err error) (connectors.Provider, func(context.Context) error, error) {
	if err != nil {
		return nil, nil, err
	}
	return p, nil, nil
}

// buildSim starts a simulated cluster stepping in the background; it runs
// until the Source is closed, then saves its state.
func (s *Source) buildSim(spec ClusterSpec) (built, error) {
	var cfg SimConfig
	if spec.Sim != nil {
		cfg = *spec.Sim
	}
	simCfg := cfg.simConfig(spec.ID)
	simCfg.Logger = s.opts.Logger
	fleet, err := sim.New(simCfg)
	if err != nil {
		return built{}, connectError(spec, Sim, "simulation", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fleet.Run(runCtx, cfg.tick()) }()
	client := fleet.Clientset()
	return built{
		cluster: connectors.Cluster{
			ID:              spec.ID,
			Provider:        fleet,
			Observer:        kubernetes.NewObserver(client, kubernetes.Config{Cluster: spec.ID, Provider: Sim}),
			Drainer:         kubernetes.NewDrainer(client, kubernetes.DrainerConfig{}),
			EnrollmentToken: spec.EnrollmentToken,
		},
		release: func(ctx context.Context) error {
			stop()
			select {
			case err := <-done:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}, nil
}

// connectError classifies a failure to build a cluster's connectors:
// connector errors keep their class (a vCenter that is down is Retryable),
// anything else is configuration and Permanent. Connectors name the
// credential reference in their errors, never its value.
func connectError(spec ClusterSpec, provider, what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	class := connectors.Permanent
	var ce *connectors.Error
	if errors.As(err, &ce) {
		class = ce.Class
	}
	out := connectors.NewError(class, provider, fmt.Sprintf("connect cluster %s (%s)", spec.ID, what), err)
	out.RetryAfter = connectors.RetryAfterOf(err)
	return out
}
