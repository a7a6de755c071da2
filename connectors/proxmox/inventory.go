package proxmox

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// vm is one QEMU VM as /cluster/resources lists it.
type vm struct {
	id     int
	name   string
	node   string
	status string // running, stopped, ...
	lock   string // clone, create, destroyed, ... while a task holds it
	tags   []string
}

func (v vm) instance() connectors.Instance {
	return connectors.Instance{ID: strconv.Itoa(v.id), Name: v.name, State: v.state()}
}

func (v vm) state() connectors.InstanceState {
	switch {
	case v.lock == "destroyed":
		return connectors.InstanceDeleting
	case v.status == "running" && v.lock == "":
		return connectors.InstanceRunning
	default: // being cloned, not yet started
		return connectors.InstanceCreating
	}
}

// clusterVM is a row of GET /cluster/resources?type=vm. It is decoded
// here rather than into go-proxmox's ClusterResource, which lacks the
// documented "lock" field a clone or destroy holds while it runs.
type clusterVM struct {
	Type     string `json:"type"`
	VMID     int    `json:"vmid"`
	Name     string `json:"name"`
	Node     string `json:"node"`
	Status   string `json:"status"`
	Lock     string `json:"lock"`
	Tags     string `json:"tags"`
	Template int    `json:"template"`
}

// listVMs lists every QEMU VM of the cluster that is not a template,
// ordered by VM ID (clones get rising IDs, so oldest first).
func (p *Provider) listVMs(ctx context.Context, op string) ([]vm, error) {
	var rows []clusterVM
	if err := p.client.Get(ctx, "/cluster/resources?type=vm", &rows); err != nil {
		return nil, p.classify(op, err)
	}
	var out []vm
	for _, r := range rows {
		if r.Type != "qemu" || r.Template != 0 {
			continue
		}
		out = append(out, vm{id: r.VMID, name: r.Name, node: r.Node, status: r.Status, lock: r.Lock, tags: parseTags(r.Tags)})
	}
	slices.SortFunc(out, func(a, b vm) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// poolVMs are the VMs tagged for the pool.
func poolVMs(vms []vm, poolLabel string) []vm {
	var out []vm
	for _, v := range vms {
		if slices.Contains(v.tags, tagPool+poolLabel) {
			out = append(out, v)
		}
	}
	return out
}

// groupSize is the group a pool-tagged VM belongs to: its size tag, when
// that is one of the configured sizes. Any other VM of the pool is a leak.
func (p *Provider) groupSize(v vm) (string, bool) {
	size, ok := tagValue(v.tags, tagSize)
	if !ok {
		return "", false
	}
	_, configured := p.templates[size]
	return size, configured
}

// groupVMs are the group's VMs.
func (p *Provider) groupVMs(vms []vm, g group) []vm {
	return slices.DeleteFunc(poolVMs(vms, g.poolLabel), func(v vm) bool {
		size, ok := p.groupSize(v)
		return !ok || size != g.size
	})
}

// alive drops VMs already being destroyed.
func alive(vms []vm) []vm {
	return slices.DeleteFunc(slices.Clone(vms), func(v vm) bool { return v.state() == connectors.InstanceDeleting })
}

// NodeGroups lists the pool's VMs grouped by size. A size with no VMs
// does not show; its ID still works for SetTargetSize.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	if err := pool.Validate(); err != nil {
		return nil, invalid(op, err)
	}
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return nil, err
	}
	label := pool.NodePoolLabel()
	bySize := map[string][]vm{}
	for _, v := range poolVMs(vms, label) {
		if size, ok := p.groupSize(v); ok {
			bySize[size] = append(bySize[size], v)
		}
	}
	groups := make([]connectors.NodeGroup, 0, len(bySize))
	for _, size := range slices.Sorted(maps.Keys(bySize)) {
		groups = append(groups, toNodeGroup(group{poolLabel: label, size: size}, bySize[size]))
	}
	return groups, nil
}

func toNodeGroup(g group, vms []vm) connectors.NodeGroup {
	ng := connectors.NodeGroup{
		ID: g.id(), Name: g.id(), Size: g.size, TargetSize: len(alive(vms)),
		Labels: map[string]string{types.LabelPool: g.poolLabel},
	}
	for _, v := range vms {
		ng.Instances = append(ng.Instances, v.instance())
	}
	return ng
}

// matchVMs picks the VMs named by name or VM ID, each once.
func matchVMs(vms []vm, namesOrIDs []string) []vm {
	want := make(map[string]bool, len(namesOrIDs))
	for _, n := range namesOrIDs {
		want[n] = true
	}
	var out []vm
	for _, v := range vms {
		if want[v.name] || want[strconv.Itoa(v.id)] {
			out = append(out, v)
		}
	}
	return out
}

func (v vm) String() string { return fmt.Sprintf("VM %d (%s on %s)", v.id, v.name, v.node) }
