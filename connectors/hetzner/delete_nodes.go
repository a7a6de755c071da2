package hetzner

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// DeleteNodes deletes the named servers (a server's name is its Kubernetes
// node name; its numeric ID is accepted too) from the group. Only servers of this group are touched; a
// name not found there, or a server already being deleted, is already
// gone, which is success. With no target to lower, the group simply holds
// fewer servers afterwards.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	g, err := parseGroupID(groupID)
	if err != nil {
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	servers, err := p.listServers(ctx, op, g.selector())
	if err != nil {
		return err
	}
	return p.deleteServers(ctx, op, matchServers(alive(servers), nodeNames))
}

// matchServers picks the servers named by name or ID, each once.
func matchServers(servers []*hcloud.Server, namesOrIDs []string) []*hcloud.Server {
	want := make(map[string]bool, len(namesOrIDs))
	for _, n := range namesOrIDs {
		want[n] = true
	}
	var out []*hcloud.Server
	for _, s := range servers {
		if want[s.Name] || want[fmt.Sprint(s.ID)] {
			out = append(out, s)
		}
	}
	return out
}

// DeleteNodeGroup deletes every server of the group. A group with no
// servers left is already gone, which is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	g, err := parseGroupID(groupID)
	if err != nil {
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	servers, err := p.listServers(ctx, op, g.selector())
	if err != nil {
		return err
	}
	return p.deleteServers(ctx, op, alive(servers))
}
