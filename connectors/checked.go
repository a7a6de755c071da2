package connectors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hanzoai/visor-fleet/types"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// MaxTargetSize bounds any target a provider is asked for: Kubernetes'
// documented limit of nodes in one cluster. A larger number is a bug
// upstream, never a request to pass on to a cloud bill.
const MaxTargetSize = 5000

// Operation names, the same in every error whichever provider served it.
const (
	OpNodeGroups      = "NodeGroups"
	OpSetTargetSize   = "SetTargetSize"
	OpCreateNodeGroup = "CreateNodeGroup"
	OpDeleteNodes     = "DeleteNodes"
	OpDeleteNodeGroup = "DeleteNodeGroup"
	OpLeakedInstances = "LeakedInstances"
	OpDeleteInstances = "DeleteInstances"
)

// Checked wraps a provider so every call's arguments are checked before
// the provider sees them, the same way for all providers: an empty
// idempotency key, group ID, node name, instance ID or size, an invalid
// pool key, a target outside [0, MaxTargetSize], a capacity type or a size
// the catalog does not sell (in the zone asked for) is refused with a
// Permanent error naming the operation and the argument, and nothing is
// called. A DeleteNodes or DeleteInstances naming nothing succeeds without
// calling the provider. Providers rely on these checks and do not repeat
// them, so every production path reaches a provider through Checked (the
// worker's clusterconfig, internal/devfleet, simremote). A provider that is
// also a LeakFinder or an InterruptionSource stays one. Checked of a
// checked provider returns it as is.
func Checked(p Provider) Provider {
	switch p := p.(type) {
	case nil:
		return nil
	case *checked, *checkedLeakFinder, *checkedNotices, *checkedLeakNotices:
		return p
	}
	c := &checked{inner: p}
	lf, leaks := p.(LeakFinder)
	is, notices := p.(InterruptionSource)
	switch {
	case leaks && notices:
		return &checkedLeakNotices{checkedLeakFinder: &checkedLeakFinder{checked: c, leaks: lf}, notices: is}
	case leaks:
		return &checkedLeakFinder{checked: c, leaks: lf}
	case notices:
		return &checkedNotices{checked: c, notices: is}
	}
	return c
}

type checked struct{ inner Provider }

func (c *checked) refuse(op, format string, args ...any) error {
	return errclass.New(errclass.Permanent, c.inner.Name(), op, fmt.Errorf(format, args...))
}

func (c *checked) Name() string { return c.inner.Name() }

func (c *checked) Catalog(ctx context.Context) ([]types.InstanceType, error) {
	return c.inner.Catalog(ctx)
}

func (c *checked) NodeGroups(ctx context.Context, pool types.PoolKey) ([]NodeGroup, error) {
	if err := pool.Validate(); err != nil {
		return nil, c.refuse(OpNodeGroups, "pool: %w", err)
	}
	return c.inner.NodeGroups(ctx, pool)
}

func (c *checked) SetTargetSize(ctx context.Context, groupID string, target int, key IdempotencyKey) error {
	if err := errors.Join(c.groupID(groupID), c.target(target), c.key(key)); err != nil {
		return c.refuse(OpSetTargetSize, "%w", err)
	}
	return c.inner.SetTargetSize(ctx, groupID, target, key)
}

func (c *checked) CreateNodeGroup(ctx context.Context, spec NodeGroupSpec, key IdempotencyKey) (NodeGroup, error) {
	var errs []error
	if err := spec.Pool.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("spec.pool: %w", err))
	}
	if spec.Size == "" {
		errs = append(errs, errors.New("spec.size is empty"))
	}
	if err := c.target(spec.TargetSize); err != nil {
		errs = append(errs, fmt.Errorf("spec.targetSize: %w", err))
	}
	errs = append(errs, c.key(key))
	if _, err := types.ParseCapacityType(string(spec.CapacityType)); err != nil {
		errs = append(errs, fmt.Errorf("spec.capacityType: %w", err))
	}
	errs = append(errs, types.ValidateNodeLabels("spec.labels", spec.Labels), types.ValidateTaints("spec.taints", spec.Taints))
	identity := spec.Pool.NodeLabels()
	for _, k := range slices.Sorted(maps.Keys(identity)) {
		if v, ok := spec.Labels[k]; ok && v != identity[k] {
			errs = append(errs, fmt.Errorf("spec.labels[%q] is %q but the pool's is %q", k, v, identity[k]))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return NodeGroup{}, c.refuse(OpCreateNodeGroup, "%w", err)
	}
	if err := c.sells(ctx, spec); err != nil {
		return NodeGroup{}, err
	}
	return c.inner.CreateNodeGroup(ctx, spec, key)
}

func (c *checked) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key IdempotencyKey) error {
	errs := []error{c.groupID(groupID), c.key(key)}
	for i, n := range nodeNames {
		if n == "" {
			errs = append(errs, fmt.Errorf("node name [%d] is empty", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c.refuse(OpDeleteNodes, "%w", err)
	}
	if len(nodeNames) == 0 {
		return nil
	}
	return c.inner.DeleteNodes(ctx, groupID, nodeNames, key)
}

func (c *checked) DeleteNodeGroup(ctx context.Context, groupID string, key IdempotencyKey) error {
	if err := errors.Join(c.groupID(groupID), c.key(key)); err != nil {
		return c.refuse(OpDeleteNodeGroup, "%w", err)
	}
	return c.inner.DeleteNodeGroup(ctx, groupID, key)
}

// sells refuses what the provider's catalog does not sell: a size it does
// not list (the planner buys from the catalog, so another size is a bug
// upstream); spot for a size it offers no spot for, since a provider
// without a spot market (DigitalOcean, Hetzner, the hypervisors) would
// otherwise buy on demand and bill it as such while the pool believed it
// bought spot; and a zone it does not offer the size in, since a provider
// whose groups cannot be pinned to a zone would otherwise put the machines
// wherever it likes while the pool believed them pinned, and a pod pinned
// to the zone would wait beside them.
func (c *checked) sells(ctx context.Context, spec NodeGroupSpec) error {
	catalog, err := c.inner.Catalog(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(catalog, func(t types.InstanceType) bool { return t.Name == spec.Size })
	if i < 0 {
		return c.refuse(OpCreateNodeGroup, "spec.size: %s does not sell size %q (its catalog does not list it)", c.inner.Name(), spec.Size)
	}
	t := catalog[i]
	if spec.CapacityType == types.CapacitySpot && !t.HasSpot() {
		return c.refuse(OpCreateNodeGroup, "spec.capacityType: %s sells no spot for size %s (its catalog lists no spot offering); use capacityTypes [on-demand]", c.inner.Name(), spec.Size)
	}
	if spec.Zone != "" && !slices.ContainsFunc(t.OfferingsOrDefault(), func(o types.Offering) bool { return o.Zone == spec.Zone }) {
		return c.refuse(OpCreateNodeGroup, "spec.zone: %s does not offer size %s in zone %q (its catalog lists no offering there)", c.inner.Name(), spec.Size, spec.Zone)
	}
	return nil
}

func (*checked) groupID(id string) error {
	if id == "" {
		return errors.New("group ID is empty")
	}
	return nil
}

func (*checked) target(n int) error {
	if n < 0 || n > MaxTargetSize {
		return fmt.Errorf("target %d is outside [0, %d]", n, MaxTargetSize)
	}
	return nil
}

func (*checked) key(k IdempotencyKey) error {
	if k == "" {
		return errors.New("idempotency key is empty: every mutating call carries one derived from workflow state")
	}
	return nil
}

type checkedLeakFinder struct {
	*checked
	leaks LeakFinder
}

func (c *checkedLeakFinder) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]Instance, error) {
	if err := pool.Validate(); err != nil {
		return nil, c.refuse(OpLeakedInstances, "pool: %w", err)
	}
	return c.leaks.LeakedInstances(ctx, pool)
}

func (c *checkedLeakFinder) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, key IdempotencyKey) error {
	var errs []error
	if err := pool.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("pool: %w", err))
	}
	for i, id := range ids {
		if id == "" {
			errs = append(errs, fmt.Errorf("instance ID [%d] is empty", i))
		}
	}
	errs = append(errs, c.key(key))
	if err := errors.Join(errs...); err != nil {
		return c.refuse(OpDeleteInstances, "%w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	return c.leaks.DeleteInstances(ctx, pool, ids, key)
}
