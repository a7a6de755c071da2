package lightsail

import (
	"context"
	"fmt"
	"slices"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

var _ connectors.LeakFinder = (*Provider)(nil)

// LeakedInstances lists instances tagged for the pool that belong to no
// group: the size tag missing, not a bundle ID or not the instance's
// bundle (an instance made by hand, or from a snapshot with other tags).
// CreateInstances tags at creation, so a crash between create and record
// leaks nothing: the next NodeGroups already lists the instance.
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	tagged, err := p.poolInstances(ctx, connectors.OpLeakedInstances, pool)
	if err != nil {
		return nil, err
	}
	out := []connectors.Instance{}
	for _, i := range tagged {
		if !member(i) {
			out = append(out, i.toInstance())
		}
	}
	return out, nil
}

// DeleteInstances deletes leaked instances by ARN (or name); one that is
// a group member is refused before anything is deleted.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteInstances
	tagged, err := p.poolInstances(ctx, op, pool)
	if err != nil {
		return err
	}
	named := slices.DeleteFunc(tagged, func(i instance) bool { return !slices.Contains(ids, i.arn) && !slices.Contains(ids, i.name) })
	for _, i := range named {
		if member(i) {
			return invalid(op, fmt.Errorf("instance %s belongs to group %s, not a leak", i.name, GroupID(pool.NodePoolLabel(), i.bundle)))
		}
	}
	return p.deleteInstances(ctx, op, named)
}

func (p *Provider) poolInstances(ctx context.Context, op string, pool types.PoolKey) ([]instance, error) {
	return p.listInstances(ctx, op, map[string]string{TagPool: pool.NodePoolLabel()})
}
