// Package proxmox connects pools to a Proxmox VE cluster: a node group is
// the pool's VMs of one size, each a clone of that size's template VM,
// tagged with the pool and the size. Proxmox has no node groups or client
// tokens, so a group's target is how many such VMs exist, and every clone
// gets a name derived from the decision's idempotency key: a repeated call
// lists the cluster's VMs, finds the clone by its name and finishes it
// (tags, start) instead of cloning again.
package proxmox

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	pve "github.com/luthermonson/go-proxmox"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package.
const ProviderName = "proxmox"

// Template is one size: a template VM whose hardware matches the shape.
type Template struct {
	// Shape's Name is the size (lower-case letters, digits and '-', as it
	// goes into tags and VM names); CPUs and MemoryMiB must match the
	// template's hardware so sizing plans with real numbers.
	sizing.Shape
	// VMID and Node locate the template VM, e.g. 9000 on pve1.
	VMID int    `json:"vmid"`
	Node string `json:"node"`
}

// Config says which Proxmox VE cluster to use and how clones are made.
// Credentials is a reference whose secret is an API token as Proxmox
// shows it: "USER@REALM!TOKENID=SECRET".
type Config struct {
	// Catalog overrides the catalog built from Templates.
	connectors.CommonConfig
	// Endpoint is the API's base URL, e.g. https://pve1.example:8006/api2/json.
	Endpoint string `json:"endpoint"`
	// Insecure skips TLS verification (a cluster's self-signed certificate).
	Insecure bool `json:"insecure,omitempty"`
	// Templates are the sizes.
	Templates []Template `json:"templates"`
	// TargetNodes spread clones over these cluster nodes (by the clone's
	// name, so a retry picks the same node); empty clones onto each
	// template's own node. Other nodes need the template on shared storage.
	TargetNodes []string `json:"targetNodes,omitempty"`
	// FullClone copies the disks instead of linking them to the template.
	FullClone bool `json:"fullClone,omitempty"`
	// Storage for a full clone's disks; empty keeps the template's.
	Storage string `json:"storage,omitempty"`
	// ResourcePool is a Proxmox resource pool the clones join, if any.
	ResourcePool string `json:"resourcePool,omitempty"`
	// TaskPoll is how often a running task (clone, start, stop, destroy)
	// is polled; default 2s. TaskTimeout bounds the wait; default 10m.
	TaskPoll    types.Duration `json:"taskPoll,omitempty"`
	TaskTimeout types.Duration `json:"taskTimeout,omitempty"`
}

const (
	defaultTaskPoll    = 2 * time.Second
	defaultTaskTimeout = 10 * time.Minute
)

// proxmoxDaemons: CNI, kube-proxy and a CSI node plugin.
var proxmoxDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 250 * types.MiB, Pods: 3}

// Provider is connectors.Provider for Proxmox VE.
type Provider struct {
	poolgroup.Groups[vm]

	cfg       Config
	catalog   []types.InstanceType
	client    *pve.Client
	templates map[string]Template // by size
}

var (
	_ connectors.Provider   = (*Provider)(nil)
	_ connectors.LeakFinder = (*Provider)(nil)
)

// New checks cfg, resolves the API token inside the activity's worker and
// builds the client. A malformed token is a Permanent error naming the
// reference, never the value.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, invalid("configure", err)
	}
	catalog, err := cfg.shapeCatalog()
	if err != nil {
		return nil, invalid("configure", err)
	}
	secret, err := cfg.Credentials.ResolveToken(ctx, secrets, ProviderName)
	if err != nil {
		return nil, err
	}
	tokenID, tokenSecret, ok := strings.Cut(secret, "=")
	if !ok || !strings.Contains(tokenID, "!") || tokenSecret == "" {
		return nil, invalid("configure", fmt.Errorf("the credential from %s must be an API token USER@REALM!TOKENID=SECRET", cfg.Credentials))
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.Insecure {
		transport.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // asked for by the operator, for a self-signed cluster certificate
	}
	p := &Provider{cfg: cfg, catalog: catalog, templates: map[string]Template{}}
	p.client = pve.NewClient(strings.TrimRight(cfg.Endpoint, "/"),
		pve.WithHTTPClient(&http.Client{Transport: statusGuard{base: transport}, Timeout: time.Minute}),
		pve.WithAPIToken(tokenID, tokenSecret),
		pve.WithUserAgent("visor-fleet"),
	)
	p.Groups = poolgroup.Groups[vm]{Provider: ProviderName, Host: host{p}}
	for _, t := range cfg.Templates {
		p.templates[t.Name] = t
		p.Sizes = append(p.Sizes, t.Name)
	}
	return p, nil
}

// shapeCatalog is the configured catalog, or the one the templates' shapes
// make.
func (c Config) shapeCatalog() ([]types.InstanceType, error) {
	shapes := make([]sizing.Shape, 0, len(c.Templates))
	for _, t := range c.Templates {
		shapes = append(shapes, t.Shape)
	}
	catalog, err := sizing.ShapeCatalog(ProviderName, proxmoxDaemons, shapes)
	if err != nil {
		return nil, err
	}
	return c.CatalogOr(catalog), nil
}

// Name is "proxmox".
func (p *Provider) Name() string { return ProviderName }

// Catalog is the configured templates' shapes.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return slices.Clone(p.catalog), nil
}

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
