package hetzner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/hetznercloud/hcloud-go/v2/hcloud/exp/labelutil"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// NodeGroups lists the pool's servers grouped by server type. A group with
// no servers left does not show; its ID still works for SetTargetSize.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	label := pool.NodePoolLabel()
	servers, err := p.listServers(ctx, op, map[string]string{LabelPool: poolLabelValue(label)})
	if err != nil {
		return nil, err
	}
	bySize := map[string][]*hcloud.Server{}
	for _, s := range servers {
		if size, ok := groupSize(s); ok {
			bySize[size] = append(bySize[size], s)
		}
	}
	var groups []connectors.NodeGroup
	for _, size := range slices.Sorted(maps.Keys(bySize)) {
		groups = append(groups, toNodeGroup(group{nodePoolLabel: label, size: size}, bySize[size]))
	}
	return groups, nil
}

// listServers lists every server matching the labels, oldest first.
func (p *Provider) listServers(ctx context.Context, op string, labels map[string]string) ([]*hcloud.Server, error) {
	var all []*hcloud.Server
	opts := hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: labelutil.Selector(labels), PerPage: 50}}
	// Paged by hand rather than with AllWithOpts so the last answer's
	// headers reach the classifier.
	for page := 1; page > 0; {
		opts.Page = page
		servers, resp, err := p.client.Server.List(ctx, opts)
		if err != nil {
			return nil, p.classify(op, resp, err)
		}
		all = append(all, servers...)
		page = 0
		if resp.Meta.Pagination != nil {
			page = resp.Meta.Pagination.NextPage
		}
	}
	slices.SortFunc(all, oldestFirst)
	return all, nil
}

func oldestFirst(a, b *hcloud.Server) int {
	return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
}

func toNodeGroup(g group, servers []*hcloud.Server) connectors.NodeGroup {
	ng := connectors.NodeGroup{
		ID: g.id(), Name: g.id(), Size: g.size,
		TargetSize: len(alive(servers)),
		Labels:     g.selector(),
	}
	for _, s := range servers {
		ng.Instances = append(ng.Instances, connectors.Instance{
			ID: fmt.Sprint(s.ID), Name: s.Name, State: instanceState(s.Status), CreatedAt: s.Created,
		})
	}
	return ng
}

// groupSize is the group a pool-labelled server belongs to: its size
// label, when that is a valid server type and the server really is of that
// type. A server failing this belongs to no group (see LeakedInstances).
func groupSize(s *hcloud.Server) (string, bool) {
	size := s.Labels[LabelSize]
	if !serverTypeRE.MatchString(size) || size == "" {
		return "", false
	}
	if s.ServerType != nil && s.ServerType.Name != "" && s.ServerType.Name != size {
		return "", false
	}
	return size, true
}

// alive drops servers already being deleted.
func alive(servers []*hcloud.Server) []*hcloud.Server {
	return slices.DeleteFunc(slices.Clone(servers), func(s *hcloud.Server) bool { return s.Status == hcloud.ServerStatusDeleting })
}

func instanceState(status hcloud.ServerStatus) connectors.InstanceState {
	switch status {
	case hcloud.ServerStatusInitializing, hcloud.ServerStatusStarting, hcloud.ServerStatusRebuilding:
		return connectors.InstanceCreating
	case hcloud.ServerStatusDeleting:
		return connectors.InstanceDeleting
	default: // running, off, stopping, migrating: there, whatever Kubernetes makes of it

		return connectors.InstanceRunning
	}
}
