package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// NodeGroups lists the pool's groups in ID order.
func (f *Fleet) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	defer f.enter(ctx)()
	if err := f.poolRead(ctx, "NodeGroups", pool); err != nil {
		return nil, err
	}
	out := []connectors.NodeGroup{}
	for _, g := range f.sortedGroups() {
		if g.Pool == pool {
			out = append(out, g.view())
		}
	}
	return out, nil
}

// CreateNodeGroup creates a group of spec.Size machines labelled for the
// pool. A repeat with the same key returns the group the first call made.
func (f *Fleet) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = "CreateNodeGroup"
	defer f.enter(ctx)()
	labels, err := f.groupLabels(spec)
	if err != nil {
		return connectors.NodeGroup{}, f.permanent(op, err)
	}
	if err := f.callFault(ctx, op); err != nil {
		return connectors.NodeGroup{}, err
	}
	request, _ := json.Marshal(spec)
	prev, done, err := f.applied(op, key, string(request))
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if done {
		if g := f.st.Groups[prev.GroupID]; g != nil {
			return g.view(), nil
		}
		return connectors.NodeGroup{}, errclass.New(errclass.NotFound, f.cfg.Provider, op,
			fmt.Errorf("group %s created under key %q no longer exists", prev.GroupID, key))
	}
	if spec.TargetSize > 0 {
		if err := f.offeringFault(op, spec.Pool, spec.Size, spec.Zone, capacityOf(spec)); err != nil {
			return connectors.NodeGroup{}, err
		}
	}
	now := f.cfg.Clock()
	g := &nodeGroup{
		ID: fmt.Sprintf("ng-%d", f.nextID()), Name: spec.Name, Size: spec.Size,
		Pool: spec.Pool, Labels: labels, Taints: spec.Taints, Target: spec.TargetSize,
		CapacityType: capacityOf(spec), Zone: spec.Zone,
	}
	if g.Name == "" {
		g.Name = spec.Pool.Service + "-" + spec.Size
	}
	// The group and key are recorded before machines launch: if a launch
	// fails, Step finishes it and a retry finds the group, never a second one.
	f.st.Groups[g.ID] = g
	f.recordKey(op, key, string(request), g.ID, now)
	if err := f.finish(ctx, op, f.reconcileGroup(ctx, g, now)); err != nil {
		return connectors.NodeGroup{}, err
	}
	return g.view(), nil
}

// SetTargetSize sets the group's absolute target, launching or removing
// machines (newest first) at once.
func (f *Fleet) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = "SetTargetSize"
	defer f.enter(ctx)()
	if target > maxGroupTarget {
		return f.permanent(op, fmt.Errorf("target %d for group %s is over the sim's per-group quota of %d", target, groupID, maxGroupTarget))
	}
	if err := f.callFault(ctx, op); err != nil {
		return err
	}
	g := f.st.Groups[groupID]
	if g == nil {
		return errclass.New(errclass.NotFound, f.cfg.Provider, op, fmt.Errorf("node group %q does not exist", groupID))
	}
	request := fmt.Sprintf("%s target=%d", groupID, target)
	if _, done, err := f.applied(op, key, request); done || err != nil {
		return err
	}
	if target > len(g.Machines) {
		if err := f.offeringFault(op, g.Pool, g.Size, g.Zone, g.CapacityType); err != nil {
			return err
		}
	}
	now := f.cfg.Clock()
	g.Target = target
	f.recordKey(op, key, request, g.ID, now)
	return f.finish(ctx, op, f.reconcileGroup(ctx, g, now))
}

// DeleteNodes deletes the named nodes of the group (by node name or, for a
// machine that never registered, instance ID) and lowers its target by as
// many, so they are not replaced. Names already gone are success; a name
// belonging to another group is refused before anything changes.
func (f *Fleet) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key connectors.IdempotencyKey) error {
	const op = "DeleteNodes"
	defer f.enter(ctx)()
	names := uniqueNames(nodeNames)
	if err := f.callFault(ctx, op); err != nil {
		return err
	}
	g := f.st.Groups[groupID]
	if g == nil {
		return errclass.New(errclass.NotFound, f.cfg.Provider, op, fmt.Errorf("node group %q does not exist", groupID))
	}
	request := groupID + " nodes=" + strings.Join(names, ",")
	if _, done, err := f.applied(op, key, request); done || err != nil {
		return err
	}
	var doomed []string // machine IDs, each once
	for _, name := range names {
		if i := g.machineIndex(name); i >= 0 {
			if id := g.Machines[i].ID; !slices.Contains(doomed, id) {
				doomed = append(doomed, id)
			}
		} else if other := f.groupOfNode(name); other != nil {
			return f.permanent(op, fmt.Errorf("node %s belongs to group %s, not %s", name, other.ID, groupID))
		}
	}
	var errs []error
	for _, id := range doomed {
		errs = append(errs, f.removeMachine(ctx, g, g.machineIndex(id)))
	}
	g.Target = max(0, g.Target-len(doomed))
	f.recordKey(op, key, request, g.ID, f.cfg.Clock())
	return f.finish(ctx, op, errors.Join(errs...))
}

// DeleteNodeGroup deletes the group and terminates its machines. A group
// already gone is success.
func (f *Fleet) DeleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error {
	const op = "DeleteNodeGroup"
	defer f.enter(ctx)()
	if err := f.callFault(ctx, op); err != nil {
		return err
	}
	g := f.st.Groups[groupID]
	if g == nil {
		return nil
	}
	var errs []error
	for len(g.Machines) > 0 {
		errs = append(errs, f.removeMachine(ctx, g, len(g.Machines)-1))
	}
	delete(f.st.Groups, groupID)
	f.recordKey(op, key, groupID, groupID, f.cfg.Clock())
	return f.finish(ctx, op, errors.Join(errs...))
}

// finish persists an applied mutation and then may lose its answer. A
// failure to persist is Retryable: the retry finds the key and saves again.
func (f *Fleet) finish(ctx context.Context, op string, applyErr error) error {
	if err := errors.Join(applyErr, f.saveLocked(ctx)); err != nil {
		return errclass.New(errclass.Retryable, f.cfg.Provider, op, err)
	}
	return f.lostAnswer(op)
}

// groupLabels validates a spec and returns the group's labels: the
// caller's plus the pool's identity, which nobody may override.
func (f *Fleet) groupLabels(spec connectors.NodeGroupSpec) (map[string]string, error) {
	var errs []error
	if err := f.checkPool(spec.Pool); err != nil {
		errs = append(errs, fmt.Errorf("spec.pool: %w", err))
	}
	if spec.TargetSize > maxGroupTarget {
		errs = append(errs, fmt.Errorf("spec.targetSize %d is over the sim's per-group quota of %d", spec.TargetSize, maxGroupTarget))
	}
	if err := f.offeringProblem(spec); err != nil {
		errs = append(errs, err)
	}
	if spec.Name != "" {
		errs = append(errs, types.ValidateDNSLabel("spec.name", spec.Name))
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, spec.Pool.NodeLabels())
	return labels, errors.Join(errs...)
}

// uniqueNames is names sorted, each once. That none is empty, and that
// there is one at all, connectors.Checked sees to.
func uniqueNames(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
