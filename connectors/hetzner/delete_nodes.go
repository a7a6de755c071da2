package hetzner

import (
	"context"
	"errors"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/hanzoai/visor-fleet/connectors"
)

// DeleteNodes deletes the named servers (a server's name is its Kubernetes
// node name) from the group. Only servers of this group are touched; a
// name not found there, or a server already being deleted, is already
// gone, which is success. With no target to lower, the group simply holds
// fewer servers afterwards.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = "delete nodes"
	g, err := parseGroupID(groupID)
	if err != nil {
		return connectors.NewError(connectors.Permanent, ProviderName, op, err)
	}
	if len(nodeNames) == 0 {
		return nil
	}
	for _, name := range nodeNames {
		if name == "" {
			return connectors.NewError(connectors.Permanent, ProviderName, op, errors.New("a node name is empty"))
		}
	}
	servers, err := p.listServers(ctx, op, g.selector())
	if err != nil {
		return err
	}
	byName := make(map[string]*hcloud.Server, len(servers))
	for _, s := range alive(servers) {
		byName[s.Name] = s
	}
	var doomed []*hcloud.Server
	for _, name := range nodeNames {
		if s, ok := byName[name]; ok {
			doomed = append(doomed, s)
		}
	}
	return p.deleteServers(ctx, op, doomed)
}
