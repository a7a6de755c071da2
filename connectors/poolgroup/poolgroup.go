// Package poolgroup is the node-group logic shared by the self-hosted
// hypervisors (kvm, proxmox), which have no node groups of their own: a
// group is the pool's machines of one configured size, and every machine
// is named from the decision's idempotency key and its ordinal, so a
// retried call finds the machines the first one made instead of making
// more. A connector lists, creates and destroys machines; Groups converges
// a group to its target from that.
//
// Groups checks only what is its own (a group ID of a configured size, a
// size with a template): the pool, targets, keys and names were checked by
// connectors.Checked, which wraps every provider a worker builds.
package poolgroup

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// sizeRE: a size goes into machine (host, node) names and tags.
var sizeRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// ValidSize checks that a size can go into machine names.
func ValidSize(size string) error {
	if !sizeRE.MatchString(size) {
		return fmt.Errorf("size %q must be 1-32 lower-case letters, digits and '-' (it goes into machine names)", size)
	}
	return nil
}

// Group is one node group: the pool's machines of one size.
type Group struct {
	PoolLabel string
	Size      string
}

// ID is "<NodePoolLabel>/<size>".
func (g Group) ID() string { return connectors.PoolGroupID(g.PoolLabel, g.Size) }

// NamePrefix starts the name of every machine of the pool's groups: a
// hash of the pool label, so a machine made but not yet marked as a member
// is still known to be the pool's.
func NamePrefix(poolLabel string) string { return "v" + connectors.NameHash(poolLabel)[:8] + "-" }

// MachineName is the name of the member whose hash of idempotency key and
// ordinal is keyHash: <NamePrefix><size>-<10 hex>, a DNS label and the
// node name.
func (g Group) MachineName(keyHash string) string {
	return NamePrefix(g.PoolLabel) + g.Size + "-" + keyHash[:10]
}

// Machine is one machine as its hypervisor lists it.
type Machine interface {
	Instance() connectors.Instance
}

// Host is a hypervisor connector's own way with its machines.
type Host[M Machine] interface {
	// List lists every machine of the host, oldest first.
	List(ctx context.Context, op string) ([]M, error)
	// GroupSize is the configured size of the pool's group m belongs to.
	GroupSize(m M, poolLabel string) (size string, ok bool)
	// Leaked says m is the pool's but in none of its groups.
	Leaked(m M, poolLabel string) bool
	// KeyHash is what m carries of the idempotency key and ordinal that
	// made it; MemberKeyHash is the same for the member key's ordinal
	// makes in g.
	KeyHash(m M) string
	MemberKeyHash(g Group, key connectors.IdempotencyKey, ordinal int) string
	// Ensure makes the member key's ordinal makes in g exist and run;
	// all is the host's whole list, where an earlier attempt's machine is.
	Ensure(ctx context.Context, op string, g Group, key connectors.IdempotencyKey, ordinal int, all []M) error
	// Destroy destroys machines; one already gone is success.
	Destroy(ctx context.Context, op string, ms []M) error
}

// Groups is connectors.Provider's node-group half for a hypervisor.
type Groups[M Machine] struct {
	// Provider names the connector in errors.
	Provider string
	// Sizes are the configured sizes, in the configuration's order.
	Sizes []string
	Host  Host[M]
}

// SetTargetSize makes the group hold target machines: it makes the
// missing ones as members of key (ordinals 0, 1, ...), or destroys the
// newest down to target. A retry after a partial success finds the
// members already made and makes only the rest.
func (gs *Groups[M]) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	g, err := gs.parse(groupID)
	if err != nil {
		return gs.invalid(op, err)
	}
	all, err := gs.Host.List(ctx, op)
	if err != nil {
		return err
	}
	live := alive(gs.members(all, g))
	switch {
	case len(live) > target:
		newest := slices.Clone(live)
		slices.Reverse(newest) // List sorts oldest first
		return gs.Host.Destroy(ctx, op, newest[:len(live)-target])
	case len(live) < target:
		// Members of key count toward the target; every other machine is
		// the rest of the group, which this call leaves alone.
		mine := make(map[string]bool, target)
		for i := range target {
			mine[gs.Host.MemberKeyHash(g, key, i)] = true
		}
		others := len(slices.DeleteFunc(slices.Clone(live), func(m M) bool { return mine[gs.Host.KeyHash(m)] }))
		return gs.ensureMembers(ctx, op, g, key, target-others, all)
	default:
		return nil
	}
}

// CreateNodeGroup makes spec.TargetSize machines of spec.Size for the pool
// as members of key and returns the group; a repeat with the same key
// makes nothing new. spec.Name is not used: a group's name is its ID.
// Labels and taints are not the hypervisor's to set: the template's
// cloud-init (kubelet flags) carries them.
func (gs *Groups[M]) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	if !slices.Contains(gs.Sizes, spec.Size) {
		return connectors.NodeGroup{}, gs.invalid(op, fmt.Errorf("spec.size %q has no template; configured sizes: %s", spec.Size, strings.Join(gs.Sizes, ", ")))
	}
	g := Group{PoolLabel: spec.Pool.NodePoolLabel(), Size: spec.Size}
	all, err := gs.Host.List(ctx, op)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if err := gs.ensureMembers(ctx, op, g, key, spec.TargetSize, all); err != nil {
		return connectors.NodeGroup{}, err
	}
	if all, err = gs.Host.List(ctx, op); err != nil {
		return connectors.NodeGroup{}, err
	}
	return nodeGroup(g, gs.members(all, g)), nil
}

// ensureMembers makes key's members 0..n-1 exist.
func (gs *Groups[M]) ensureMembers(ctx context.Context, op string, g Group, key connectors.IdempotencyKey, n int, all []M) error {
	for i := range n {
		if err := gs.Host.Ensure(ctx, op, g, key, i, all); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNodes destroys the named machines (by name, the node name, or the
// hypervisor's ID) of the group. Only machines of this group are touched;
// a name not found there is already gone, which is success. The target
// follows, since it is the number of machines.
func (gs *Groups[M]) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	g, err := gs.parse(groupID)
	if err != nil {
		return gs.invalid(op, err)
	}
	all, err := gs.Host.List(ctx, op)
	if err != nil {
		return err
	}
	return gs.Host.Destroy(ctx, op, named(alive(gs.members(all, g)), nodeNames))
}

// DeleteNodeGroup destroys every machine of the group. A group with no
// machines left is already gone, which is success.
func (gs *Groups[M]) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	g, err := gs.parse(groupID)
	if err != nil {
		return gs.invalid(op, err)
	}
	all, err := gs.Host.List(ctx, op)
	if err != nil {
		return err
	}
	return gs.Host.Destroy(ctx, op, alive(gs.members(all, g)))
}

// NodeGroups lists the pool's machines grouped by size. A size with no
// machines does not show; its ID still works for SetTargetSize.
func (gs *Groups[M]) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	all, err := gs.Host.List(ctx, op)
	if err != nil {
		return nil, err
	}
	label := pool.NodePoolLabel()
	bySize := map[string][]M{}
	for _, m := range all {
		if size, ok := gs.Host.GroupSize(m, label); ok {
			bySize[size] = append(bySize[size], m)
		}
	}
	groups := make([]connectors.NodeGroup, 0, len(bySize))
	for _, size := range slices.Sorted(maps.Keys(bySize)) {
		groups = append(groups, nodeGroup(Group{PoolLabel: label, Size: size}, bySize[size]))
	}
	return groups, nil
}

// LeakedInstances lists the pool's machines that belong to none of its
// groups (Leaked says which).
func (gs *Groups[M]) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	leaked, _, err := gs.leaks(ctx, connectors.OpLeakedInstances, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(leaked))
	for _, m := range leaked {
		out = append(out, m.Instance())
	}
	return out, nil
}

// DeleteInstances destroys leaked machines by ID (or name); one that is a
// group member is refused before anything is destroyed.
func (gs *Groups[M]) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteInstances
	leaked, members, err := gs.leaks(ctx, op, pool)
	if err != nil {
		return err
	}
	if m := named(members, ids); len(m) > 0 {
		size, _ := gs.Host.GroupSize(m[0], pool.NodePoolLabel())
		return gs.invalid(op, fmt.Errorf("%s belongs to group %s, not a leak", m[0].Instance().Name, connectors.PoolGroupID(pool.NodePoolLabel(), size)))
	}
	return gs.Host.Destroy(ctx, op, named(alive(leaked), ids))
}

// leaks are the pool's machines outside its groups, and its groups'.
func (gs *Groups[M]) leaks(ctx context.Context, op string, pool types.PoolKey) (leaked, members []M, err error) {
	all, err := gs.Host.List(ctx, op)
	if err != nil {
		return nil, nil, err
	}
	label := pool.NodePoolLabel()
	for _, m := range all {
		if _, ok := gs.Host.GroupSize(m, label); ok {
			members = append(members, m)
		} else if gs.Host.Leaked(m, label) {
			leaked = append(leaked, m)
		}
	}
	return leaked, members, nil
}

// parse parses a group ID of one of the configured sizes.
func (gs *Groups[M]) parse(id string) (Group, error) {
	label, size, err := connectors.ParsePoolGroupID(id)
	if err != nil {
		return Group{}, err
	}
	if !slices.Contains(gs.Sizes, size) {
		return Group{}, fmt.Errorf("group ID %q: size %q has no template; configured sizes: %s", id, size, strings.Join(gs.Sizes, ", "))
	}
	return Group{PoolLabel: label, Size: size}, nil
}

// members are the group's machines.
func (gs *Groups[M]) members(all []M, g Group) []M {
	return slices.DeleteFunc(slices.Clone(all), func(m M) bool {
		size, ok := gs.Host.GroupSize(m, g.PoolLabel)
		return !ok || size != g.Size
	})
}

func (gs *Groups[M]) invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, gs.Provider, op, err)
}

// alive drops machines already being destroyed.
func alive[M Machine](ms []M) []M {
	return slices.DeleteFunc(slices.Clone(ms), func(m M) bool { return m.Instance().State == connectors.InstanceDeleting })
}

// named picks the machines named by name or ID.
func named[M Machine](ms []M, namesOrIDs []string) []M {
	var out []M
	for _, m := range ms {
		if inst := m.Instance(); slices.Contains(namesOrIDs, inst.Name) || slices.Contains(namesOrIDs, inst.ID) {
			out = append(out, m)
		}
	}
	return out
}

func nodeGroup[M Machine](g Group, ms []M) connectors.NodeGroup {
	ng := connectors.NodeGroup{
		ID: g.ID(), Name: g.ID(), Size: g.Size, TargetSize: len(alive(ms)),
		Labels: map[string]string{types.LabelPool: g.PoolLabel},
	}
	for _, m := range ms {
		ng.Instances = append(ng.Instances, m.Instance())
	}
	return ng
}
