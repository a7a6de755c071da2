// Package kvm connects pools to a KVM host through libvirt: a node group is
// the pool's domains of one size, each defined from that size's template
// domain (its XML, with a new name, UUID and MACs, its volume disks cloned)
// and carrying the pool, size and idempotency key in its own <metadata>
// element. The domain's name and UUID derive from the decision's
// idempotency key, so libvirt itself refuses a second domain for a retried
// decision and the retry finds and finishes the first.
package kvm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package.
const ProviderName = "kvm"

// Template is one size: an inactive domain whose hardware matches the shape.
type Template struct {
	sizing.Shape
	// Domain is the template domain's name on the host.
	Domain string `json:"domain"`
}

// Config says which libvirt to reach and which templates are the sizes.
type Config struct {
	// URI is the libvirt connection URI the daemon opens, e.g.
	// qemu:///system (test:///default in tests).
	URI string `json:"uri"`
	// Socket is libvirtd's unix socket (default
	// /var/run/libvirt/libvirt-sock): its file permissions are libvirt's
	// access control, so there is no credential to reference. Address
	// instead reaches a libvirtd at host:port over TCP (an SSH tunnel to a
	// remote host's socket, say); exactly one of the two.
	Socket  string `json:"socket,omitempty"`
	Address string `json:"address,omitempty"`
	// Templates are the sizes.
	Templates []Template `json:"templates"`
	// Catalog overrides the catalog built from Templates.
	Catalog []types.InstanceType `json:"catalog,omitempty"`
}

const defaultSocket = "/var/run/libvirt/libvirt-sock"

// kvmDaemons: CNI, kube-proxy and a CSI node plugin.
var kvmDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 250 * types.MiB, Pods: 3}

// Provider is connectors.Provider for a libvirt host. It holds one
// connection, reopened when it drops.
type Provider struct {
	poolgroup.Groups[domain]

	cfg       Config
	catalog   []types.InstanceType
	templates map[string]Template // by size

	mu   sync.Mutex
	conn *libvirt.Libvirt
}

var (
	_ connectors.Provider   = (*Provider)(nil)
	_ connectors.LeakFinder = (*Provider)(nil)
)

// New checks cfg, connects and checks every template domain's hardware
// against its shape, so a wrong name or shape fails here, named.
func New(ctx context.Context, cfg Config, _ connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, invalid("configure", err)
	}
	catalog, err := cfg.shapeCatalog()
	if err != nil {
		return nil, invalid("configure", err)
	}
	p := &Provider{cfg: cfg, catalog: catalog, templates: map[string]Template{}}
	p.Groups = poolgroup.Groups[domain]{Provider: ProviderName, Host: host{p}}
	for _, t := range cfg.Templates {
		p.templates[t.Name] = t
		p.Sizes = append(p.Sizes, t.Name)
	}
	for _, t := range cfg.Templates {
		if _, err := p.templateDomain(ctx, "configure", t); err != nil {
			_ = p.Close(ctx)
			return nil, err
		}
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
	catalog, err := sizing.ShapeCatalog(ProviderName, kvmDaemons, shapes)
	if err != nil {
		return nil, err
	}
	if len(c.Catalog) > 0 {
		return slices.Clone(c.Catalog), nil
	}
	return catalog, nil
}

// Name is "kvm".
func (p *Provider) Name() string { return ProviderName }

// Catalog is the configured templates' shapes.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return slices.Clone(p.catalog), nil
}

// Close drops the connection.
func (p *Provider) Close(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return nil
	}
	err := p.conn.Disconnect()
	p.conn = nil
	return err
}

// client is the open connection, opened (again) when there is none.
func (p *Provider) client(op string) (*libvirt.Libvirt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil && p.conn.IsConnected() {
		return p.conn, nil
	}
	var dialer = dialers.NewLocal(dialers.WithSocket(cmpOr(p.cfg.Socket, defaultSocket)), dialers.WithLocalTimeout(10*time.Second))
	var l *libvirt.Libvirt
	if p.cfg.Address != "" {
		host, port, err := net.SplitHostPort(p.cfg.Address)
		if err != nil {
			return nil, invalid(op, fmt.Errorf("address %q must be host:port: %w", p.cfg.Address, err))
		}
		l = libvirt.NewWithDialer(dialers.NewRemote(host, dialers.UsePort(port), dialers.WithRemoteTimeout(10*time.Second)))
	} else {
		l = libvirt.NewWithDialer(dialer)
	}
	if err := l.ConnectToURI(libvirt.ConnectURI(p.cfg.URI)); err != nil {
		return nil, p.classify(op, fmt.Errorf("connect to %s: %w", p.cfg.URI, err))
	}
	p.conn = l
	return l, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}

// classify maps libvirt's error numbers onto the connector classes; a
// failure without a libvirt error (the socket) is Retryable.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	var le libvirt.Error
	if !errors.As(err, &le) {
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	msg := strings.ToLower(le.Message)
	switch libvirt.ErrorNumber(le.Code) {
	case libvirt.ErrNoDomain, libvirt.ErrNoStorageVol, libvirt.ErrNoStoragePool, libvirt.ErrNoDomainMetadata:
		return errclass.New(errclass.NotFound, ProviderName, op, err)
	case libvirt.ErrAuthFailed, libvirt.ErrAccessDenied, libvirt.ErrOperationDenied, libvirt.ErrAuthUnavailable:
		return errclass.New(errclass.Permanent, ProviderName, op, fmt.Errorf("libvirt refused access to %s: %w", p.cfg.URI, err))
	case libvirt.ErrNoMemory:
		return errclass.New(errclass.InsufficientCapacity, ProviderName, op, err)
	case libvirt.ErrOperationTimeout, libvirt.ErrResourceBusy, libvirt.ErrRPC, libvirt.ErrAgentUnresponsive:
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	switch {
	case strings.Contains(msg, "cannot allocate memory"), strings.Contains(msg, "no space left"), strings.Contains(msg, "not enough"):
		return errclass.New(errclass.InsufficientCapacity, ProviderName, op, err)
	case strings.Contains(msg, "too many"), strings.Contains(msg, "max_client_requests"):
		e := errclass.New(errclass.RateLimited, ProviderName, op, err)
		e.RetryAfter = time.Second
		return e
	}
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
