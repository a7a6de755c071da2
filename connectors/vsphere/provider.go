// Package vsphere connects pools to vCenter: a node group is a folder of
// VMs cloned from one template (the size), under a folder per pool.
package vsphere

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/soap"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package.
const ProviderName = "vsphere"

// Template is one size: a template VM whose hardware matches the shape.
type Template struct {
	// Shape's Name is the size; CPUs and MemoryMiB must match the
	// template VM's hardware (New checks) so sizing plans with real numbers.
	Shape
	// Path is the template VM's inventory path, e.g. /DC0/vm/templates/ubuntu-4c16g.
	Path string `json:"path"`
}

// Config says which vCenter to use and where clones go. Credentials is a
// reference whose secret is "USERNAME:PASSWORD" (split at the first colon,
// so the password may contain colons).
type Config struct {
	// Catalog overrides the catalog built from Templates.
	connectors.CommonConfig
	// Endpoint is the vCenter URL or host name; "/sdk" is implied.
	Endpoint string `json:"endpoint"`
	// Insecure skips TLS verification (vcsim, labs with self-signed certificates).
	Insecure bool `json:"insecure,omitempty"`
	// Datacenter defaults to the only one.
	Datacenter string `json:"datacenter,omitempty"`
	// Folder is the inventory path under which each pool gets a folder
	// and each of its sizes a subfolder.
	Folder string `json:"folder"`
	// ResourcePool clones run in; defaults to the datacenter's only one.
	ResourcePool string `json:"resourcePool,omitempty"`
	// Datastore for clones; defaults to the template's.
	Datastore string     `json:"datastore,omitempty"`
	Templates []Template `json:"templates"`
}

// Provider is connectors.Provider for vSphere.
type Provider struct {
	cfg       Config
	catalog   []types.InstanceType
	userinfo  *url.Userinfo
	client    *govmomi.Client
	finder    *find.Finder
	folder    *object.Folder
	pool      *object.ResourcePool
	datastore *object.Datastore
	templates map[string]*object.VirtualMachine // by size

	sessionMu sync.Mutex
	// beforeClone, when set (tests only), runs between deciding to clone a
	// name and asking vCenter to, to stage a racing duplicate.
	beforeClone func(ctx context.Context, name string)
}

var (
	_ connectors.Provider   = (*Provider)(nil)
	_ connectors.LeakFinder = (*Provider)(nil)
)

// New checks cfg, resolves the credential, logs in and resolves every
// configured inventory path, so a wrong path fails here, named.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, invalid("New", err)
	}
	catalog, err := cfg.shapeCatalog()
	if err != nil {
		return nil, invalid("New", err)
	}
	secret, err := cfg.Credentials.Resolve(ctx, secrets)
	if err != nil {
		return nil, err
	}
	user, password, ok := strings.Cut(secret, ":")
	if !ok || user == "" || password == "" {
		return nil, invalid("New", fmt.Errorf("credential %s must be USERNAME:PASSWORD", cfg.Credentials))
	}
	u, err := soap.ParseURL(cfg.Endpoint)
	if err != nil || u == nil {
		return nil, invalid("New", fmt.Errorf("endpoint %q is not a URL: %v", cfg.Endpoint, err))
	}
	p := &Provider{cfg: cfg, catalog: catalog, userinfo: url.UserPassword(user, password)}
	if err := p.connect(ctx, u); err != nil {
		return nil, err
	}
	if err := p.resolveInventory(ctx); err != nil {
		_ = p.client.Logout(ctx)
		return nil, err
	}
	return p, nil
}

// shapeCatalog is the configured catalog, or the one the templates' shapes
// make.
func (c Config) shapeCatalog() ([]types.InstanceType, error) {
	shapes := make([]Shape, 0, len(c.Templates))
	for _, t := range c.Templates {
		shapes = append(shapes, t.Shape)
	}
	catalog, err := ShapeCatalog(shapes)
	if err != nil {
		return nil, err
	}
	return c.CatalogOr(catalog), nil
}

// Name implements connectors.Provider.
func (p *Provider) Name() string { return ProviderName }

// Catalog implements connectors.Provider.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return append([]types.InstanceType(nil), p.catalog...), nil
}

// Close logs out of vCenter.
func (p *Provider) Close(ctx context.Context) error { return p.client.Logout(ctx) }

// NodeGroups implements connectors.Provider: one group per size subfolder
// of the pool's folder.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = "NodeGroups"
	if err := p.ensureSession(ctx); err != nil {
		return nil, err
	}
	label := pool.NodePoolLabel()
	poolFolder, err := p.childFolder(ctx, op, p.folder, label)
	if errclass.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sizes, err := p.childFolders(ctx, op, poolFolder)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.NodeGroup, 0, len(sizes))
	for _, size := range sizes {
		g, err := p.nodeGroup(ctx, op, GroupID(label, size.name), size.folder)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (p *Provider) nodeGroup(ctx context.Context, op, id string, folder *object.Folder) (connectors.NodeGroup, error) {
	label, size, _ := parseGroupID(id)
	vms, err := p.listVMs(ctx, op, folder)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	g := connectors.NodeGroup{
		ID: id, Name: id, Size: size, TargetSize: len(vms),
		Instances: make([]connectors.Instance, 0, len(vms)),
		Labels:    map[string]string{types.LabelPool: label},
	}
	for _, vm := range vms {
		g.Instances = append(g.Instances, vm.instance())
	}
	return g, nil
}

// SetTargetSize implements connectors.Provider: clones with key-derived
// names until target VMs exist, or destroys the newest down to target.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = "SetTargetSize"
	label, size, err := parseGroupID(groupID)
	if err != nil {
		return invalid(op, err)
	}
	if err := p.ensureSession(ctx); err != nil {
		return err
	}
	folder, err := p.groupFolder(ctx, op, label, size, false)
	if err != nil {
		return err
	}
	return p.resize(ctx, op, folder, label, size, target, key, true)
}

// CreateNodeGroup implements connectors.Provider. The group is the pool's
// folder for spec.Size, so a repeat with the same key (or any key) finds
// it; a create only ever adds VMs, up to spec.TargetSize.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = "CreateNodeGroup"
	if p.templates[spec.Size] == nil {
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("size %q has no template; configured sizes: %s", spec.Size, strings.Join(p.sizes(), ", ")))
	}
	if err := p.ensureSession(ctx); err != nil {
		return connectors.NodeGroup{}, err
	}
	label := spec.Pool.NodePoolLabel()
	folder, err := p.groupFolder(ctx, op, label, spec.Size, true)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if err := p.resize(ctx, op, folder, label, spec.Size, spec.TargetSize, key, false); err != nil {
		return connectors.NodeGroup{}, err
	}
	return p.nodeGroup(ctx, op, GroupID(label, spec.Size), folder)
}

// DeleteNodes implements connectors.Provider: each named VM in the group's
// folder (by VM name, which is the node name, or by managed object ID for a
// VM that never joined) is powered off and destroyed. A name not in the
// folder is already gone; VMs outside the folder are never touched. The target follows,
// since it is the number of VMs.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key connectors.IdempotencyKey) error {
	const op = "DeleteNodes"
	label, size, err := parseGroupID(groupID)
	if err != nil {
		return invalid(op, err)
	}
	if err := p.ensureSession(ctx); err != nil {
		return err
	}
	folder, err := p.groupFolder(ctx, op, label, size, false)
	if err != nil {
		return err
	}
	vms, err := p.listVMs(ctx, op, folder)
	if err != nil {
		return err
	}
	return p.destroyAll(ctx, op, p.matchVMs(vms, nodeNames))
}

// matchVMs picks the VMs named by name or managed object ID, each once.
func (p *Provider) matchVMs(vms []vmInfo, namesOrIDs []string) []*object.VirtualMachine {
	want := make(map[string]bool, len(namesOrIDs))
	for _, n := range namesOrIDs {
		want[n] = true
	}
	var out []*object.VirtualMachine
	for _, vm := range vms {
		if want[vm.name] || want[vm.ref.Value] {
			out = append(out, object.NewVirtualMachine(p.client.Client, vm.ref))
		}
	}
	return out
}

func (p *Provider) sizes() []string {
	out := make([]string, 0, len(p.cfg.Templates))
	for _, t := range p.cfg.Templates {
		out = append(out, t.Name)
	}
	return out
}

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
