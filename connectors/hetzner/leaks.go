package hetzner

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

var _ connectors.LeakFinder = (*Provider)(nil)

// LeakedInstances lists servers labelled for the pool that belong to no
// group: their size label is missing, invalid or not their server type
// (say, a server created by hand or by a half-finished rebuild). A server
// the connector creates carries both labels from its first API call, so a
// crash between create and record never leaks here: the next NodeGroups
// already reports it.
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	const op = connectors.OpLeakedInstances
	leaked, err := p.leakedServers(ctx, op, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(leaked))
	for _, s := range leaked {
		out = append(out, connectors.Instance{ID: fmt.Sprint(s.ID), Name: s.Name, State: instanceState(s.Status), CreatedAt: s.Created})
	}
	return out, nil
}

// DeleteInstances deletes leaked servers by ID; an ID that is not a leaked
// server of the pool is refused before anything is deleted.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteInstances
	leaked, err := p.leakedServers(ctx, op, pool)
	if err != nil {
		return err
	}
	doomed := matchServers(alive(leaked), ids)
	if err := p.refuseGroupMembers(ctx, op, pool, ids); err != nil {
		return err
	}
	return p.deleteServers(ctx, op, doomed)
}

func (p *Provider) leakedServers(ctx context.Context, op string, pool types.PoolKey) ([]*hcloud.Server, error) {
	servers, err := p.listServers(ctx, op, map[string]string{LabelPool: poolLabelValue(pool.NodePoolLabel())})
	if err != nil {
		return nil, err
	}
	var out []*hcloud.Server
	for _, s := range servers {
		if _, inGroup := groupSize(s); !inGroup {
			out = append(out, s)
		}
	}
	return out, nil
}

// refuseGroupMembers fails when an ID names a server of one of the pool's
// groups: garbage collection must never shrink a group behind its back.
func (p *Provider) refuseGroupMembers(ctx context.Context, op string, pool types.PoolKey, ids []string) error {
	groups, err := p.NodeGroups(ctx, pool)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, g := range groups {
		for _, inst := range g.Instances {
			if want[inst.ID] || want[inst.Name] {
				return errclass.New(errclass.Permanent, ProviderName, op,
					fmt.Errorf("server %s (%s) belongs to group %s, not a leak", inst.ID, inst.Name, g.ID))
			}
		}
	}
	return nil
}
