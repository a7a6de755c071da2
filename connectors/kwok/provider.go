package kwok

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

// Provider is the kwok cloud of one cluster: its machines are Node objects
// in that cluster's API server.
type Provider struct {
	cfg     Config
	client  k8s.Interface
	catalog map[string]types.InstanceType
	now     func() time.Time
	log     *slog.Logger
}

var _ connectors.Provider = (*Provider)(nil)

// Options are what New needs besides the clusters file's section.
type Options struct {
	// Clock is time.Now unless a test says otherwise.
	Clock  func() time.Time
	Logger *slog.Logger
}

// New makes the provider over the cluster's API. It touches no network;
// Run starts the reconciler that creates booted machines' nodes.
func New(cfg Config, client k8s.Interface, opts Options) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, fmt.Errorf("kwok: %v", err)
	}
	p := &Provider{cfg: cfg, client: client, catalog: map[string]types.InstanceType{}, now: opts.Clock, log: opts.Logger}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	for _, t := range cfg.catalog() {
		p.catalog[t.Name] = t
	}
	return p, nil
}

// Name is the provider kind.
func (p *Provider) Name() string { return ProviderName }

// Catalog is the configured sizes, or the default catalog.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return p.cfg.catalog(), nil
}

// NodeGroups lists the pool's groups with each machine's state: creating
// until its node exists, running once it does.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	selector := labels.SelectorFromSet(labels.Set{types.LabelPool: pool.NodePoolLabel()}).String()
	records, err := p.listRecords(ctx, LabelGroup+","+selector)
	if err != nil {
		return nil, p.classify(op, err)
	}
	nodes, err := p.listNodes(ctx, LabelGroup+","+selector)
	if err != nil {
		return nil, p.classify(op, err)
	}
	out := []connectors.NodeGroup{}
	for _, g := range records {
		if g.Pool == pool {
			out = append(out, view(g, nodes))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// CreateNodeGroup records a new group and launches its machines; a repeat
// with the same key returns the group the first call created.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	t, ok := p.catalog[spec.Size]
	if !ok {
		return connectors.NodeGroup{}, p.permanent(op, fmt.Errorf("spec.size %q is not in the kwok catalog", spec.Size))
	}
	zone := spec.Zone
	if labelled := spec.Labels[corev1.LabelTopologyZone]; labelled != "" {
		if zone != "" && zone != labelled {
			return connectors.NodeGroup{}, p.permanent(op, fmt.Errorf("spec.zone %q and spec.labels[%s] %q disagree", zone, corev1.LabelTopologyZone, labelled))
		}
		zone = labelled
	}
	if zone != "" && !slices.Contains(t.Zones, zone) {
		return connectors.NodeGroup{}, p.permanent(op, fmt.Errorf("spec.zone %q: size %s is offered in zones %v only", zone, spec.Size, t.Zones))
	}
	request, _ := json.Marshal(spec)
	g := &groupRecord{
		ID: groupID(string(key)), Name: spec.Name, Size: spec.Size, Pool: spec.Pool,
		Labels: spec.Labels, Taints: spec.Taints, Zone: zone, Request: string(request),
	}
	elsewhere, err := p.poolZones(ctx, spec.Pool, g.ID)
	if err != nil {
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	g.grow(spec.TargetSize, t.Zones, elsewhere, p.now())
	cm, err := p.configMap(g)
	if err != nil {
		return connectors.NodeGroup{}, p.permanent(op, err)
	}
	_, err = p.client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		if err = p.ensureNamespace(ctx); err == nil {
			_, err = p.client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		}
	}
	if apierrors.IsAlreadyExists(err) {
		prev, _, readErr := p.readRecord(ctx, g.ID)
		if readErr != nil {
			return connectors.NodeGroup{}, p.classify(op, readErr)
		}
		if prev.Request != g.Request {
			return connectors.NodeGroup{}, p.permanent(op, fmt.Errorf("idempotency key %q already created group %s for another request", key, prev.ID))
		}
		g, err = prev, nil
	}
	if err != nil {
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	nodes, err := p.listNodes(ctx, LabelGroup+"="+g.ID)
	if err != nil {
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	return view(g, nodes), nil
}

// SetTargetSize launches machines up to target, or removes the newest
// ones down to it. The target is absolute, so a repeat changes nothing.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, _ connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	var gone []string
	current, _, err := p.readRecord(ctx, groupID)
	if err != nil {
		return p.classify(op, err)
	}
	elsewhere, err := p.poolZones(ctx, current.Pool, groupID)
	if err != nil {
		return p.classify(op, err)
	}
	_, err = p.updateRecord(ctx, groupID, func(g *groupRecord) error {
		t, ok := p.catalog[g.Size]
		if !ok {
			return p.permanent(op, fmt.Errorf("group %s is of size %q, which the kwok catalog no longer has", groupID, g.Size))
		}
		g.grow(target, t.Zones, elsewhere, p.now())
		gone = g.shrink(target)
		return nil
	})
	if err != nil {
		return p.classify(op, err)
	}
	return p.classify(op, p.deleteNodes(ctx, gone))
}

// DeleteNodes removes the named machines (by node name, which is also the
// machine ID) from the group, then their nodes; the target drops by as
// many. A name no longer in the group is success; a name in another of
// the provider's groups is refused before anything changes.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	for _, name := range nodeNames {
		if other, ok := p.groupOfNode(ctx, name); ok && other != groupID {
			return p.permanent(op, fmt.Errorf("node %s belongs to group %s, not %s", name, other, groupID))
		}
	}
	var gone []string
	_, err := p.updateRecord(ctx, groupID, func(g *groupRecord) error {
		gone = g.remove(nodeNames)
		return nil
	})
	if err != nil {
		return p.classify(op, err)
	}
	return p.classify(op, p.deleteNodes(ctx, gone))
}

// DeleteNodeGroup removes the record first, so no node of it is created
// again, then every node of the group. A group already gone is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	err := p.client.CoreV1().ConfigMaps(p.cfg.namespace()).Delete(ctx, groupID, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return p.classify(op, err)
	}
	nodes, err := p.listNodes(ctx, LabelGroup+"="+groupID)
	if err != nil {
		return p.classify(op, err)
	}
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	return p.classify(op, p.deleteNodes(ctx, names))
}

// groupOfNode is the group an existing node of this provider belongs to.
func (p *Provider) groupOfNode(ctx context.Context, name string) (string, bool) {
	n, err := p.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	g, ok := n.Labels[LabelGroup]
	return g, ok
}

func (p *Provider) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.cfg.namespace()}}
	_, err := p.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// view is a record as the contract's NodeGroup, nodes being the
// provider's nodes by name.
func view(g *groupRecord, nodes map[string]*corev1.Node) connectors.NodeGroup {
	out := connectors.NodeGroup{
		ID: g.ID, Name: g.Name, Size: g.Size, TargetSize: len(g.Machines),
		Labels: g.Labels, Instances: make([]connectors.Instance, 0, len(g.Machines)), Zone: g.zone(),
	}
	for _, m := range g.Machines {
		state := connectors.InstanceCreating
		if n, ok := nodes[m.ID]; ok {
			state = connectors.InstanceRunning
			if n.DeletionTimestamp != nil {
				state = connectors.InstanceDeleting
			}
		}
		out.Instances = append(out.Instances, connectors.Instance{ID: m.ID, Name: m.ID, State: state, CreatedAt: m.CreatedAt})
	}
	return out
}

func (p *Provider) permanent(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}

// classify maps API server errors into the contract's classes.
func (p *Provider) classify(op string, err error) error {
	return kubernetes.ClassifyError(ProviderName, op, err)
}
