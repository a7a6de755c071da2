package clusterconfig

import (
	"context"
	"errors"
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
)

// built is one cluster's connectors and how to release them.
type built struct {
	cluster connectors.Cluster
	// release frees what the connectors hold (a vCenter session, a running
	// simulation); nil when there is nothing.
	release func(context.Context) error
}

// build makes a cluster's connectors through its registered kind. It runs
// inside an activity, so the credentials it resolves stay on this worker.
// Every provider is wrapped in connectors.Checked.
func (s *Source) build(ctx context.Context, spec ClusterSpec) (built, error) {
	kind, ok := connectors.LookupKind(spec.Provider)
	if !ok {
		// Validate rejects any other kind; reaching here means an unvalidated File.
		return built{}, connectError(spec, spec.Provider, "provider", fmt.Errorf("provider %q is not one this worker can build", spec.Provider))
	}
	env := connectors.BuildEnv{ClusterID: spec.ID, Logger: s.opts.Logger}
	if kind.OwnsCluster {
		b, err := kind.Build(ctx, spec.Config(), env)
		if err != nil {
			return built{}, connectError(spec, spec.Provider, "simulation", err)
		}
		return built{cluster: spec.cluster(b.Provider, b.Observer, b.Drainer, b.Events), release: b.Release}, nil
	}
	kube, err := spec.kubeClients()
	if err != nil {
		return built{}, connectError(spec, "kubernetes", "kubernetes access", err)
	}
	env.Secrets = kubernetes.NewSecretReader(kube.core)
	env.Kubeconfig, env.KubeContext = spec.Kubeconfig, spec.KubeContext
	observe := kubernetes.Config{Cluster: spec.ID, Provider: spec.Provider, Metrics: kube.metrics, Informers: spec.Informers, Dynamic: kube.dynamic}
	if spec.Prometheus != nil {
		usage, err := kubernetes.NewPrometheusUsage(spec.Prometheus.config(spec.ID, env.Secrets))
		if err != nil {
			return built{}, connectError(spec, "kubernetes", "prometheus usage", err)
		}
		observe.Usage = usage
	}
	b, err := kind.Build(ctx, spec.Config(), env)
	if err != nil {
		return built{}, connectError(spec, spec.Provider, "provider", err)
	}
	observer := kubernetes.NewObserver(kube.core, observe)
	events := kubernetes.NewEventRecorder(kube.events)
	release := func(ctx context.Context) error {
		events.Close()
		err := observer.Close(ctx) // stops the informers, if any
		if b.Release != nil {
			err = errors.Join(err, b.Release(ctx))
		}
		return err
	}
	return built{
		cluster: spec.cluster(b.Provider, observer,
			kubernetes.NewDrainer(kube.core, kubernetes.DrainerConfig{}), events),
		release: release,
	}, nil
}

// cluster bundles a cluster's connectors, the provider behind the
// argument checks every provider gets.
func (c ClusterSpec) cluster(p connectors.Provider, o connectors.Observer, d connectors.Drainer, ev connectors.EventRecorder) connectors.Cluster {
	return connectors.Cluster{
		ID:       c.ID,
		Provider: connectors.Checked(p),
		Observer: o,
		Drainer:  d,
		Events:   ev,
		// Resolved by the watcher when it reports; relative file
		// references were made absolute when the file was loaded.
		EnrollmentToken: c.EnrollmentToken,
	}
}

// connectError classifies a failure to build a cluster's connectors:
// connector errors keep their class (a vCenter that is down is Retryable),
// anything else is configuration and Permanent. Connectors name the
// credential reference in their errors, never its value.
func connectError(spec ClusterSpec, provider, what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	class := errclass.Permanent
	var ce *errclass.Error
	if errors.As(err, &ce) {
		class = ce.Class
	}
	out := errclass.New(class, provider, fmt.Sprintf("connect cluster %s (%s)", spec.ID, what), err)
	out.RetryAfter = errclass.RetryAfterOf(err)
	return out
}
