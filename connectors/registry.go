package connectors

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hanzoai/visor-fleet/types"
)

// Kind is what a provider package registers so that a worker can read its
// section of a clusters file and build it, without a per-provider switch
// anywhere else.
type Kind struct {
	// Name is the provider kind as written in the clusters file and in pool
	// keys; it also names the file section holding the Config.
	Name string
	// NewConfig returns an empty Config to decode the section into (a
	// pointer, so decoding fills it).
	NewConfig func() Config
	// Build makes the provider from a decoded, validated Config. Secrets
	// resolves the credential references the Config holds.
	Build func(ctx context.Context, cfg Config, env BuildEnv) (Built, error)
	// Catalog is the provider's built-in list of sizes; nil when its
	// sizes come from configuration (vSphere templates).
	Catalog func() []types.InstanceType
	// OwnsCluster marks a kind that brings its own Kubernetes API (a
	// simulation): its Build returns the Observer and Drainer too, its
	// cluster entry takes no kubeconfig, and its section is optional.
	OwnsCluster bool
}

// BuildEnv is what a worker hands a Kind's Build.
type BuildEnv struct {
	// ClusterID is the cluster the provider serves.
	ClusterID string
	// Secrets reads secret: references from the cluster's own API; nil
	// for a kind that OwnsCluster.
	Secrets SecretReader
	Logger  *slog.Logger
	// Kubeconfig and KubeContext are how the worker reaches the cluster's
	// own API (empty Kubeconfig: its in-cluster service account), for a
	// provider whose machines are objects in it (kwok). Unset for a kind
	// that OwnsCluster.
	Kubeconfig, KubeContext string
}

// Built is what a Kind's Build returns.
type Built struct {
	Provider Provider
	// Observer, Drainer and Events are set only by a kind that OwnsCluster.
	Observer Observer
	Drainer  Drainer
	Events   EventRecorder
	// Release frees what the provider holds (a session, a running
	// simulation); nil when there is nothing.
	Release func(context.Context) error
}

var registry = struct {
	sync.RWMutex
	kinds map[string]Kind
	order []string
}{kinds: map[string]Kind{}}

// Register adds a provider kind. It panics on a kind without a name,
// config or constructor, or on a name registered twice: both are
// programming errors found at start-up.
func Register(k Kind) {
	if k.Name == "" || k.NewConfig == nil || k.Build == nil {
		panic(fmt.Sprintf("connectors.Register: kind %q needs Name, NewConfig and Build", k.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.kinds[k.Name]; dup {
		panic(fmt.Sprintf("connectors.Register: kind %q registered twice", k.Name))
	}
	registry.kinds[k.Name] = k
	registry.order = append(registry.order, k.Name)
}

// LookupKind returns the registered kind of that name.
func LookupKind(name string) (Kind, bool) {
	registry.RLock()
	defer registry.RUnlock()
	k, ok := registry.kinds[name]
	return k, ok
}

// KindNames lists the registered kinds in registration order.
func KindNames() []string {
	registry.RLock()
	defer registry.RUnlock()
	return append([]string(nil), registry.order...)
}

// CatalogOf returns a registered kind's built-in catalog.
func CatalogOf(name string) ([]types.InstanceType, error) {
	k, ok := LookupKind(name)
	if !ok {
		return nil, fmt.Errorf("provider %q is not a registered kind (known: %v)", name, KindNames())
	}
	if k.Catalog == nil {
		return nil, fmt.Errorf("provider %q has no built-in catalog: its sizes come from its configuration", name)
	}
	return k.Catalog(), nil
}

// CloudKind is the Kind of a provider reached over a cloud API and
// configured by a section of type C; newProvider is the package's New.
func CloudKind[C any, PC interface {
	*C
	Config
}](name string, newProvider func(context.Context, C, SecretReader) (Provider, func(context.Context) error, error), catalog func() []types.InstanceType) Kind {
	return Kind{
		Name:      name,
		NewConfig: func() Config { return PC(new(C)) },
		Build: func(ctx context.Context, cfg Config, env BuildEnv) (Built, error) {
			c, ok := cfg.(PC)
			if !ok || c == nil {
				return Built{}, fmt.Errorf("provider %q: configuration is %T, not %T", name, cfg, PC(nil))
			}
			p, release, err := newProvider(ctx, *c, env.Secrets)
			if err != nil {
				return Built{}, err
			}
			return Built{Provider: p, Release: release}, nil
		},
		Catalog: catalog,
	}
}

// StatelessKind is CloudKind for a provider that holds nothing to release:
// newProvider is the package's New as written. A failed New never yields
// a non-nil interface around a nil pointer.
func StatelessKind[C any, PC interface {
	*C
	Config
}, P Provider](name string, newProvider func(context.Context, C, SecretReader) (P, error), catalog func() []types.InstanceType) Kind {
	return CloudKind[C, PC](name, func(ctx context.Context, cfg C, secrets SecretReader) (Provider, func(context.Context) error, error) {
		p, err := newProvider(ctx, cfg, secrets)
		if err != nil {
			return nil, nil, err
		}
		return p, nil, nil
	}, catalog)
}

// ClosingKind is CloudKind for a provider that holds a connection:
// newProvider is the package's New as written, and Release is its Close.
func ClosingKind[C any, PC interface {
	*C
	Config
}, P interface {
	Provider
	Close(context.Context) error
}](name string, newProvider func(context.Context, C, SecretReader) (P, error), catalog func() []types.InstanceType) Kind {
	return CloudKind[C, PC](name, func(ctx context.Context, cfg C, secrets SecretReader) (Provider, func(context.Context) error, error) {
		p, err := newProvider(ctx, cfg, secrets)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Close, nil
	}, catalog)
}
