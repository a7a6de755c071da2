package aliyun

import (
	"context"
	"fmt"
	"slices"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// LeakedInstances lists instances tagged for the pool that belong to no
// group: a size tag missing, invalid or not the instance's type (an
// instance made by hand, or retyped). RunInstances tags at creation, so a
// crash between create and record never leaks: the next NodeGroups
// already reports the instance.
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	const op = connectors.OpLeakedInstances
	leaked, _, err := p.leaks(ctx, op, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(leaked))
	for _, i := range leaked {
		out = append(out, i.toInstance())
	}
	return out, nil
}

// DeleteInstances releases leaked instances by ID; an ID that is a group
// member is refused before anything is released.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteInstances
	leaked, members, err := p.leaks(ctx, op, pool)
	if err != nil {
		return err
	}
	if named := matchInstances(members, ids); len(named) > 0 {
		return invalid(op, fmt.Errorf("instance %s (%s) belongs to group %s, not a leak", named[0].id, named[0].hostName,
			GroupID(pool.NodePoolLabel(), named[0].instanceType)))
	}
	return p.deleteInstances(ctx, op, matchInstances(leaked, ids))
}

// leaks splits the pool's tagged instances into leaks and group members.
func (p *Provider) leaks(ctx context.Context, op string, pool types.PoolKey) (leaked, members []instance, err error) {
	all, err := p.listInstances(ctx, op, map[string]string{TagPool: pool.NodePoolLabel()})
	if err != nil {
		return nil, nil, err
	}
	for _, i := range all {
		if _, ok := groupSize(i); ok {
			members = append(members, i)
		} else {
			leaked = append(leaked, i)
		}
	}
	return slices.Clip(leaked), members, nil
}
