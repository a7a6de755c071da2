package proxmox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// LeakedInstances lists the pool's VMs that belong to none of its groups:
// VMs tagged for the pool whose size tag is missing or not a configured
// size, and VMs carrying the pool's clone name but no tags at all (a clone
// whose worker died before it tagged it, and whose decision was never
// retried).
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	leaked, err := p.leakedVMs(ctx, connectors.OpLeakedInstances, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(leaked))
	for _, v := range leaked {
		out = append(out, v.instance())
	}
	return out, nil
}

// DeleteInstances destroys leaked VMs by VM ID; an ID that is not a leaked
// VM of the pool is refused before anything is destroyed.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteInstances
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if id == "" {
			return invalid(op, errors.New("an instance ID is empty"))
		}
	}
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return err
	}
	if err := pool.Validate(); err != nil {
		return invalid(op, err)
	}
	leaked := p.leaks(vms, pool.NodePoolLabel())
	for _, v := range poolVMs(vms, pool.NodePoolLabel()) {
		named := slices.Contains(ids, fmt.Sprint(v.id)) || slices.Contains(ids, v.name)
		if named && !slices.ContainsFunc(leaked, func(l vm) bool { return l.id == v.id }) {
			return invalid(op, fmt.Errorf("%s belongs to a group of the pool, not a leak", v))
		}
	}
	return p.destroyAll(ctx, op, matchVMs(alive(leaked), ids))
}

func (p *Provider) leakedVMs(ctx context.Context, op string, pool types.PoolKey) ([]vm, error) {
	if err := pool.Validate(); err != nil {
		return nil, invalid(op, err)
	}
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return nil, err
	}
	return p.leaks(vms, pool.NodePoolLabel()), nil
}

func (p *Provider) leaks(vms []vm, poolLabel string) []vm {
	var out []vm
	prefix := namePrefix(poolLabel)
	for _, v := range vms {
		_, tagged := tagValue(v.tags, tagPool)
		switch {
		case slices.Contains(v.tags, tagPool+poolLabel):
			if _, inGroup := p.groupSize(v); !inGroup {
				out = append(out, v)
			}
		case !tagged && strings.HasPrefix(v.name, prefix):
			out = append(out, v)
		}
	}
	return out
}
