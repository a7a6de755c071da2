package vsphere

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// resize brings the folder to target VMs: clones named by (key, ordinal),
// skipping names already present, or (when shrink) destroys the newest.
func (p *Provider) resize(ctx context.Context, op string, folder *object.Folder, label, size string, target int, key connectors.IdempotencyKey, shrink bool) error {
	vms, err := p.listVMs(ctx, op, folder)
	if err != nil {
		return err
	}
	if len(vms) > target && shrink {
		// Newest first: the oldest nodes carry the longest-running pods.
		sort.Slice(vms, func(a, b int) bool {
			if !vms[a].created.Equal(vms[b].created) {
				return vms[a].created.After(vms[b].created)
			}
			return vms[a].name > vms[b].name
		})
		doomed := make([]*object.VirtualMachine, 0, len(vms)-target)
		for _, v := range vms[:len(vms)-target] {
			doomed = append(doomed, object.NewVirtualMachine(p.client.Client, v.ref))
		}
		return p.destroyAll(ctx, op, doomed)
	}
	if len(vms) >= target {
		return nil
	}
	tmpl := p.templates[size]
	if tmpl == nil {
		return invalid(op, fmt.Errorf("size %q has no template configured, so group %s cannot grow", size, GroupID(label, size)))
	}
	existing := make(map[string]bool, len(vms))
	for _, v := range vms {
		existing[v.name] = true
	}
	var names []string
	for ordinal := 0; len(names) < target-len(vms); ordinal++ {
		if n := VMName(label, size, key, ordinal); !existing[n] {
			names = append(names, n)
		}
	}
	return p.cloneAll(ctx, op, folder, tmpl, names)
}

// cloneAll clones the template once per name, concurrently (a clone takes
// minutes on real storage), powering each on.
func (p *Provider) cloneAll(ctx context.Context, op string, folder *object.Folder, tmpl *object.VirtualMachine, names []string) error {
	spec := types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Pool: types.NewReference(p.pool.Reference())},
		PowerOn:  true,
	}
	if p.datastore != nil {
		spec.Location.Datastore = types.NewReference(p.datastore.Reference())
	}
	return p.each(op, len(names), func(i int) error {
		return p.clone(ctx, op, folder, tmpl, names[i], spec)
	})
}

// clone makes one VM. DuplicateName means an earlier attempt of the same
// decision got there first (names are key-derived): that VM is accepted.
func (p *Provider) clone(ctx context.Context, op string, folder *object.Folder, tmpl *object.VirtualMachine, name string, spec types.VirtualMachineCloneSpec) error {
	if p.beforeClone != nil {
		p.beforeClone(ctx, name)
	}
	task, err := tmpl.Clone(ctx, folder, name, spec)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err == nil {
		return nil
	}
	if !isDuplicateName(err) {
		return p.classify(op+": clone "+name, err)
	}
	vm, lookErr := p.findVM(ctx, op, folder, name)
	if lookErr != nil {
		return lookErr
	}
	if vm == nil {
		// The name is taken by something that is not a VM in this folder.
		return errclass.New(errclass.Retryable, ProviderName, op,
			fmt.Errorf("clone %s: name taken, but no such VM in %s: %w", name, folder.InventoryPath, err))
	}
	return nil
}

// destroyAll powers off and destroys each VM, concurrently.
func (p *Provider) destroyAll(ctx context.Context, op string, vms []*object.VirtualMachine) error {
	return p.each(op, len(vms), func(i int) error { return p.destroy(ctx, op, vms[i]) })
}

// destroy powers vm off (if on) and destroys it. A VM that is already gone
// is success, so a retried delete is harmless.
func (p *Provider) destroy(ctx context.Context, op string, vm *object.VirtualMachine) error {
	var state mo.VirtualMachine
	err := property.DefaultCollector(p.client.Client).RetrieveOne(ctx, vm.Reference(), []string{"runtime.powerState"}, &state)
	if isGone(err) {
		return nil
	}
	if err != nil {
		return p.classify(op+": power state of "+vm.Reference().Value, err)
	}
	if state.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		task, err := vm.PowerOff(ctx)
		if err == nil {
			err = task.Wait(ctx)
		}
		switch {
		case isGone(err):
			return nil
		case err != nil && !fault.IsAlreadyPoweredOffError(err):
			return p.classify(op+": power off "+vm.Reference().Value, err)
		}
	}
	task, err := vm.Destroy(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if isGone(err) {
		return nil
	}
	return p.classify(op+": destroy "+vm.Reference().Value, err)
}

// each runs f for 0..n-1 concurrently. One failure is returned as is;
// several are joined under the first one's class.
func (p *Provider) each(op string, n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return failed[0]
	}
	return errclass.New(errclass.Of(failed[0]), ProviderName, op, errors.Join(failed...))
}

func isDuplicateName(err error) bool { return fault.Is(err, &types.DuplicateName{}) }

func isGone(err error) bool { return err != nil && fault.Is(err, &types.ManagedObjectNotFound{}) }
