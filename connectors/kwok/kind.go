package kwok

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

// Defaults of the clusters file's kwok section.
const (
	DefaultBootDelay = 5 * time.Second
	DefaultNamespace = "visor-kwok"
	defaultResync    = time.Second
)

// Config is a clusters file's kwok section. The provider reaches the API
// server through the cluster entry's own kubeconfig (or the worker's
// service account), and needs create, delete, list and get on nodes and on
// configmaps in Namespace.
type Config struct {
	// BootDelay is how long a machine takes from launch to its Node
	// object; default 5s.
	BootDelay types.Duration `json:"bootDelay,omitempty"`
	// Namespace holds the group records (ConfigMaps); default visor-kwok,
	// created on the first group.
	Namespace string `json:"namespace,omitempty"`
	// Resync is how often booted machines get their nodes; default 1s.
	Resync types.Duration `json:"resync,omitempty"`
	// Catalog replaces the default sizes (Catalog()).
	Catalog []types.InstanceType `json:"catalog,omitempty"`
	// Region labels every node (topology.kubernetes.io/region), as a
	// cloud's nodes are: set it to the cluster's declared region, which
	// the planner's node templates carry. Empty: no region label.
	Region string `json:"region,omitempty"`
}

func (c Config) bootDelay() time.Duration {
	if c.BootDelay == 0 {
		return DefaultBootDelay
	}
	return c.BootDelay.D()
}

func (c Config) resync() time.Duration {
	if c.Resync <= 0 {
		return defaultResync
	}
	return c.Resync.D()
}

func (c Config) namespace() string {
	if c.Namespace == "" {
		return DefaultNamespace
	}
	return c.Namespace
}

// catalog is a fresh copy each call: a caller editing it changes nothing.
func (c Config) catalog() []types.InstanceType {
	if len(c.Catalog) == 0 {
		return Catalog()
	}
	out := slices.Clone(c.Catalog)
	for i := range out {
		out[i].Zones = slices.Clone(out[i].Zones)
	}
	return out
}

// Validate reports what is wrong in a clusters file's kwok section, field
// by field; New checks with it too (connectors.ConfigError).
func (c *Config) Validate(p connectors.Problems) {
	add := p.Add
	if c.BootDelay < 0 {
		add("bootDelay", "must not be negative, got %s", c.BootDelay)
	}
	if c.Resync < 0 {
		add("resync", "must not be negative, got %s", c.Resync)
	}
	if c.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(c.Namespace) {
			add("namespace", "%q: %s", c.Namespace, msg)
		}
	}
	if c.Region != "" {
		for _, msg := range validation.IsValidLabelValue(c.Region) {
			add("region", "%q: %s", c.Region, msg)
		}
	}
	seen := map[string]bool{}
	for i, t := range c.Catalog {
		at := fmt.Sprintf("catalog[%d]", i)
		switch {
		case t.Name == "":
			add(at+".name", "is empty")
		case seen[t.Name]:
			add(at+".name", "%q is listed twice", t.Name)
		case len(validation.IsValidLabelValue(t.Name)) > 0:
			add(at+".name", "%q is not a label value (it goes in node.kubernetes.io/instance-type)", t.Name)
		}
		seen[t.Name] = true
		if t.MilliCPU <= 0 || t.Memory <= 0 || t.MaxPods <= 0 {
			add(at, "size %q: milliCPU, memoryBytes and maxPods must be positive", t.Name)
		}
		for _, z := range t.Zones {
			if z == "" || len(validation.IsValidLabelValue(z)) > 0 {
				add(at+".zones", "%q is not a label value", z)
			}
		}
	}
}

// Kind registers kwok with a worker's clusters file (section "kwok"). The
// provider's reconciler runs while the cluster's connectors are built.
var Kind = connectors.Kind{
	Name:      ProviderName,
	NewConfig: func() connectors.Config { return new(Config) },
	Build:     build,
	Catalog:   Catalog,
}

func build(_ context.Context, section connectors.Config, env connectors.BuildEnv) (connectors.Built, error) {
	var cfg Config
	if c, ok := section.(*Config); ok && c != nil {
		cfg = *c
	}
	rc, err := kubernetes.RESTConfig(env.Kubeconfig, env.KubeContext)
	if err != nil {
		return connectors.Built{}, err
	}
	client, err := k8s.NewForConfig(rc)
	if err != nil {
		return connectors.Built{}, fmt.Errorf("kwok: kubernetes client: %w", err)
	}
	p, err := New(cfg, client, Options{Logger: env.Logger})
	if err != nil {
		return connectors.Built{}, err
	}
	release := p.Start()
	return connectors.Built{Provider: p, Release: release}, nil
}

// Start runs the reconciler in the background until the returned release
// is called.
func (p *Provider) Start() (release func(context.Context) error) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return func(wait context.Context) error {
		stop()
		select {
		case err := <-done:
			return err
		case <-wait.Done():
			return errors.Join(wait.Err())
		}
	}
}
