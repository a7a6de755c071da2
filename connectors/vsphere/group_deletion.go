package vsphere

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// DeleteNodeGroup implements connectors.Provider: every VM in the group's
// folder is powered off and destroyed, then the emptied folder, so the
// group is no longer listed. A folder already gone is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error {
	const op = "DeleteNodeGroup"
	label, size, err := parseGroupID(groupID)
	if err != nil {
		return invalid(op, err)
	}
	if err := p.ensureSession(ctx); err != nil {
		return err
	}
	folder, err := p.groupFolder(ctx, op, label, size, false)
	if errclass.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	vms, err := p.listVMs(ctx, op, folder)
	if err != nil {
		return err
	}
	refs := make([]*object.VirtualMachine, 0, len(vms))
	for _, vm := range vms {
		refs = append(refs, object.NewVirtualMachine(p.client.Client, vm.ref))
	}
	if err := p.destroyAll(ctx, op, refs); err != nil {
		return err
	}
	// Only an empty folder is destroyed: Destroy on a folder takes
	// everything in it, and anything left there is not ours to take.
	left, err := folder.Children(ctx)
	if err != nil {
		return p.classify(op+": list "+folder.InventoryPath, err)
	}
	if len(left) > 0 {
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("folder %s still holds %d objects that are not the group's VMs (templates, folders); remove them by hand", folder.InventoryPath, len(left)))
	}
	task, err := folder.Destroy(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if isGone(err) {
		return nil
	}
	return p.classify(op+": destroy folder "+folder.InventoryPath, err)
}

// LeakedInstances implements connectors.LeakFinder: VMs directly in the
// pool's folder, outside every size subfolder (a group is a size folder).
// The connector clones straight into a size folder, so a crash between
// "cloned" and "recorded" cannot leak; what shows here was put there by
// hand or by a folder move.
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	const op = "LeakedInstances"
	vms, err := p.strayVMs(ctx, op, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(vms))
	for _, vm := range vms {
		out = append(out, vm.instance())
	}
	return out, nil
}

// DeleteInstances implements connectors.LeakFinder: destroys stray VMs of
// the pool by managed object ID. Group members are refused before anything
// is destroyed; an ID no longer there is success.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, key connectors.IdempotencyKey) error {
	const op = "DeleteInstances"
	stray, err := p.strayVMs(ctx, op, pool)
	if err != nil {
		return err
	}
	groups, err := p.NodeGroups(ctx, pool)
	if err != nil {
		return err
	}
	for _, g := range groups {
		for _, inst := range g.Instances {
			for _, id := range ids {
				if id == inst.ID || id == inst.Name {
					return errclass.New(errclass.Permanent, ProviderName, op,
						fmt.Errorf("VM %s (%s) belongs to group %s: it is not a leak", inst.ID, inst.Name, g.ID))
				}
			}
		}
	}
	return p.destroyAll(ctx, op, p.matchVMs(stray, ids))
}

func (p *Provider) strayVMs(ctx context.Context, op string, pool types.PoolKey) ([]vmInfo, error) {
	if err := p.ensureSession(ctx); err != nil {
		return nil, err
	}
	poolFolder, err := p.childFolder(ctx, op, p.folder, pool.NodePoolLabel())
	if errclass.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return p.listVMs(ctx, op, poolFolder)
}
