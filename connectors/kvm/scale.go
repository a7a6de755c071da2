package kvm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// SetTargetSize makes the group hold target domains: it defines the
// missing ones as members of key (ordinals 0, 1, ... by deterministic
// name and UUID), or destroys the newest down to target.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	g, err := p.parseGroup(groupID)
	switch {
	case err != nil:
		return invalid(op, err)
	case target < 0:
		return invalid(op, fmt.Errorf("target %d is negative", target))
	case key == "":
		return invalid(op, errors.New("idempotency key is empty"))
	}
	all, err := p.listDomains(ctx, op)
	if err != nil {
		return err
	}
	live := p.groupDomains(all, g)
	switch {
	case len(live) > target:
		newest := slices.Clone(live)
		slices.Reverse(newest) // listDomains sorts oldest first
		return p.destroyAll(op, newest[:len(live)-target])
	case len(live) < target:
		mine := map[string]bool{}
		for i := range target {
			mine[g.member(key, i).meta.Key] = true
		}
		others := len(slices.DeleteFunc(slices.Clone(live), func(d domain) bool { return mine[d.meta.Key] }))
		return p.ensureMembers(ctx, op, g, key, target-others, all)
	default:
		return nil
	}
}

// CreateNodeGroup defines spec.TargetSize domains of spec.Size for the
// pool as members of key and returns the group; a repeat with the same
// key defines nothing new. Labels and taints are not libvirt's to set: the
// template's cloud-init (kubelet flags) carries them.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	if err := spec.Pool.Validate(); err != nil {
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.pool: %w", err))
	}
	if _, ok := p.templates[spec.Size]; !ok {
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.size %q has no template; configured sizes: %s", spec.Size, strings.Join(p.sizes(), ", ")))
	}
	if spec.TargetSize < 0 || key == "" {
		return connectors.NodeGroup{}, invalid(op, errors.New("spec.targetSize must not be negative and the idempotency key not empty"))
	}
	g := group{poolLabel: spec.Pool.NodePoolLabel(), size: spec.Size}
	all, err := p.listDomains(ctx, op)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if err := p.ensureMembers(ctx, op, g, key, spec.TargetSize, all); err != nil {
		return connectors.NodeGroup{}, err
	}
	if all, err = p.listDomains(ctx, op); err != nil {
		return connectors.NodeGroup{}, err
	}
	return toNodeGroup(g, p.groupDomains(all, g)), nil
}

func (p *Provider) ensureMembers(ctx context.Context, op string, g group, key connectors.IdempotencyKey, n int, all []domain) error {
	for i := range n {
		if err := p.ensureMember(ctx, op, g, g.member(key, i), all); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNodes destroys the named domains (by name, the node name, or
// UUID) of the group; a name not there is already gone.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	g, err := p.parseGroup(groupID)
	if err != nil {
		return invalid(op, err)
	}
	if slices.Contains(nodeNames, "") {
		return invalid(op, errors.New("a node name is empty"))
	}
	if len(nodeNames) == 0 {
		return nil
	}
	all, err := p.listDomains(ctx, op)
	if err != nil {
		return err
	}
	return p.destroyAll(op, matchDomains(p.groupDomains(all, g), nodeNames))
}

// DeleteNodeGroup destroys every domain of the group.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	g, err := p.parseGroup(groupID)
	if err != nil {
		return invalid(op, err)
	}
	all, err := p.listDomains(ctx, op)
	if err != nil {
		return err
	}
	return p.destroyAll(op, p.groupDomains(all, g))
}

func (p *Provider) parseGroup(id string) (group, error) {
	g, err := parseGroupID(id)
	if err != nil {
		return group{}, err
	}
	if _, ok := p.templates[g.size]; !ok {
		return group{}, fmt.Errorf("group ID %q: size %q has no template; configured sizes: %s", id, g.size, strings.Join(p.sizes(), ", "))
	}
	return g, nil
}

func (p *Provider) sizes() []string {
	out := make([]string, 0, len(p.cfg.Templates))
	for _, t := range p.cfg.Templates {
		out = append(out, t.Name)
	}
	return out
}

// LeakedInstances lists domains whose metadata names the pool but no
// configured size (a size since removed from the configuration, or a
// domain made by hand). The metadata is part of the definition, so a
// crash between define and record never leaks.
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	leaked, _, err := p.leaks(ctx, connectors.OpLeakedInstances, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(leaked))
	for _, d := range leaked {
		out = append(out, d.instance())
	}
	return out, nil
}

// DeleteInstances destroys leaked domains by UUID (or name); one that is
// a group member is refused before anything is destroyed.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteInstances
	if len(ids) == 0 {
		return nil
	}
	leaked, members, err := p.leaks(ctx, op, pool)
	if err != nil {
		return err
	}
	if named := matchDomains(members, ids); len(named) > 0 {
		return invalid(op, fmt.Errorf("domain %s belongs to group %s, not a leak", named[0].name, GroupID(named[0].meta.Pool, named[0].meta.Size)))
	}
	return p.destroyAll(op, matchDomains(leaked, ids))
}

func (p *Provider) leaks(ctx context.Context, op string, pool types.PoolKey) (leaked, members []domain, err error) {
	if err := pool.Validate(); err != nil {
		return nil, nil, invalid(op, err)
	}
	all, err := p.listDomains(ctx, op)
	if err != nil {
		return nil, nil, err
	}
	label := pool.NodePoolLabel()
	for _, d := range all {
		if d.meta == nil || d.meta.Pool != label {
			continue
		}
		if _, ok := p.templates[d.meta.Size]; ok {
			members = append(members, d)
		} else {
			leaked = append(leaked, d)
		}
	}
	return leaked, members, nil
}
