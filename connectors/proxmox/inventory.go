package proxmox

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/hanzoai/visor-fleet/connectors"
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

func (v vm) Instance() connectors.Instance {
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

// List lists every QEMU VM of the cluster that is not a template, ordered
// by VM ID (clones get rising IDs, so oldest first).
func (p host) List(ctx context.Context, op string) ([]vm, error) {
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

func (v vm) String() string { return fmt.Sprintf("VM %d (%s on %s)", v.id, v.name, v.node) }
