package proxmox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// SetTargetSize makes the group hold target VMs: it clones the missing
// ones as members of key (ordinals 0, 1, ... by deterministic name), or
// destroys the newest down to target. A retry after a partial success
// finds the members already made and clones only the rest.
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
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return err
	}
	live := alive(p.groupVMs(vms, g))
	switch {
	case len(live) > target:
		newest := slices.Clone(live)
		slices.Reverse(newest) // listVMs sorts by VM ID, oldest first
		return p.destroyAll(ctx, op, newest[:len(live)-target])
	case len(live) < target:
		// Members of key count toward the target; every other VM is the
		// rest of the group, which this call leaves alone.
		mine := memberNames(g, key, target)
		others := len(slices.DeleteFunc(slices.Clone(live), func(v vm) bool { return mine[v.name] }))
		return p.ensureMembers(ctx, op, g, key, target-others, vms)
	default:
		return nil
	}
}

// CreateNodeGroup clones spec.TargetSize VMs of spec.Size for the pool as
// members of key and returns the group. Repeating it with the same key
// clones nothing new. spec.Name is not used: a group's name is its ID.
// spec.Labels and spec.Taints are not Proxmox's to set: Kubernetes node
// labels and taints come from the template's cloud-init (kubelet flags).
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	if err := spec.Pool.Validate(); err != nil {
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.pool: %w", err))
	}
	switch _, ok := p.templates[spec.Size]; {
	case !ok:
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.size %q has no template; configured sizes: %s", spec.Size, strings.Join(p.sizes(), ", ")))
	case spec.TargetSize < 0:
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.targetSize %d is negative", spec.TargetSize))
	case key == "":
		return connectors.NodeGroup{}, invalid(op, errors.New("idempotency key is empty"))
	}
	g := group{poolLabel: spec.Pool.NodePoolLabel(), size: spec.Size}
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if err := p.ensureMembers(ctx, op, g, key, spec.TargetSize, vms); err != nil {
		return connectors.NodeGroup{}, err
	}
	if vms, err = p.listVMs(ctx, op); err != nil {
		return connectors.NodeGroup{}, err
	}
	return toNodeGroup(g, p.groupVMs(vms, g)), nil
}

// ensureMembers makes key's members 0..n-1 exist.
func (p *Provider) ensureMembers(ctx context.Context, op string, g group, key connectors.IdempotencyKey, n int, vms []vm) error {
	for i := range n {
		if err := p.ensureMember(ctx, op, g, g.member(key, i), vms); err != nil {
			return err
		}
	}
	return nil
}

// memberNames are the names of key's first n members.
func memberNames(g group, key connectors.IdempotencyKey, n int) map[string]bool {
	out := make(map[string]bool, n)
	for i := range n {
		out[g.member(key, i).name] = true
	}
	return out
}

// DeleteNodes destroys the named VMs (a VM's name is its Kubernetes node
// name; its VM ID is accepted too) of the group. Only VMs of this group
// are touched; a name not found there is already gone, which is success.
// The target follows, since it is the number of VMs.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	g, err := p.parseGroup(groupID)
	if err != nil {
		return invalid(op, err)
	}
	for _, name := range nodeNames {
		if name == "" {
			return invalid(op, errors.New("a node name is empty"))
		}
	}
	if len(nodeNames) == 0 {
		return nil
	}
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return err
	}
	return p.destroyAll(ctx, op, matchVMs(alive(p.groupVMs(vms, g)), nodeNames))
}

// DeleteNodeGroup destroys every VM of the group. A group with no VMs
// left is already gone, which is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	g, err := p.parseGroup(groupID)
	if err != nil {
		return invalid(op, err)
	}
	vms, err := p.listVMs(ctx, op)
	if err != nil {
		return err
	}
	return p.destroyAll(ctx, op, alive(p.groupVMs(vms, g)))
}

// parseGroup parses a group ID of one of the configured sizes.
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
