package vsphere

import (
	"context"
	"fmt"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// vmInfo is what a group needs to know about one VM.
type vmInfo struct {
	ref     types.ManagedObjectReference
	name    string
	power   types.VirtualMachinePowerState
	created time.Time
}

// instance: a VM not powered on is mid-clone or mid-delete; either way it
// is not serving yet, so it reports as creating.
func (v vmInfo) instance() connectors.Instance {
	state := connectors.InstanceCreating
	if v.power == types.VirtualMachinePowerStatePoweredOn {
		state = connectors.InstanceRunning
	}
	return connectors.Instance{ID: v.ref.Value, Name: v.name, State: state, CreatedAt: v.created}
}

// findChild returns parent's direct child called name of the given
// managed object type, or nil.
func (p *Provider) findChild(ctx context.Context, op string, parent *object.Folder, name, kind string) (*types.ManagedObjectReference, error) {
	ref, err := object.NewSearchIndex(p.client.Client).FindChild(ctx, parent, name)
	if err != nil {
		return nil, p.classify(op+": FindChild "+name, err)
	}
	if ref == nil || ref.Reference().Type != kind {
		return nil, nil
	}
	r := ref.Reference()
	return &r, nil
}

// childFolder is parent's subfolder name, or a NotFound error.
func (p *Provider) childFolder(ctx context.Context, op string, parent *object.Folder, name string) (*object.Folder, error) {
	ref, err := p.findChild(ctx, op, parent, name, "Folder")
	if err != nil {
		return nil, err
	}
	if ref == nil {
		return nil, errclass.New(errclass.NotFound, ProviderName, op,
			fmt.Errorf("folder %s/%s does not exist", parent.InventoryPath, name))
	}
	f := object.NewFolder(p.client.Client, *ref)
	f.InventoryPath = parent.InventoryPath + "/" + name
	return f, nil
}

// ensureFolder creates parent/name; DuplicateName means it exists already.
func (p *Provider) ensureFolder(ctx context.Context, op string, parent *object.Folder, name string) (*object.Folder, error) {
	f, err := p.childFolder(ctx, op, parent, name)
	if !errclass.IsNotFound(err) {
		return f, err
	}
	if _, err := parent.CreateFolder(ctx, name); err != nil && !isDuplicateName(err) {
		return nil, p.classify(op+": CreateFolder "+name, err)
	}
	return p.childFolder(ctx, op, parent, name)
}

// groupFolder is <Folder>/<pool label>/<size>, created when create is set.
func (p *Provider) groupFolder(ctx context.Context, op, label, size string, create bool) (*object.Folder, error) {
	get := p.childFolder
	if create {
		get = p.ensureFolder
	}
	poolFolder, err := get(ctx, op, p.folder, label)
	if err != nil {
		return nil, err
	}
	return get(ctx, op, poolFolder, size)
}

type namedFolder struct {
	name   string
	folder *object.Folder
}

// childFolders lists parent's subfolders.
func (p *Provider) childFolders(ctx context.Context, op string, parent *object.Folder) ([]namedFolder, error) {
	refs, err := p.children(ctx, op, parent, "Folder")
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	var folders []mo.Folder
	if err := property.DefaultCollector(p.client.Client).Retrieve(ctx, refs, []string{"name"}, &folders); err != nil {
		return nil, p.classify(op+": retrieve folders", err)
	}
	out := make([]namedFolder, 0, len(folders))
	for _, f := range folders {
		nf := object.NewFolder(p.client.Client, f.Reference())
		nf.InventoryPath = parent.InventoryPath + "/" + f.Name
		out = append(out, namedFolder{name: f.Name, folder: nf})
	}
	return out, nil
}

func (p *Provider) children(ctx context.Context, op string, parent *object.Folder, kind string) ([]types.ManagedObjectReference, error) {
	all, err := parent.Children(ctx)
	if err != nil {
		return nil, p.classify(op+": list "+parent.InventoryPath, err)
	}
	var refs []types.ManagedObjectReference
	for _, c := range all {
		if c.Reference().Type == kind {
			refs = append(refs, c.Reference())
		}
	}
	return refs, nil
}

// listVMs lists the group folder's VMs (templates excluded).
func (p *Provider) listVMs(ctx context.Context, op string, folder *object.Folder) ([]vmInfo, error) {
	refs, err := p.children(ctx, op, folder, "VirtualMachine")
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	var vms []mo.VirtualMachine
	props := []string{"name", "runtime.powerState", "config.createDate", "config.template"}
	if err := property.DefaultCollector(p.client.Client).Retrieve(ctx, refs, props, &vms); err != nil {
		return nil, p.classify(op+": retrieve VMs", err)
	}
	out := make([]vmInfo, 0, len(vms))
	for _, vm := range vms {
		v := vmInfo{ref: vm.Reference(), name: vm.Name, power: vm.Runtime.PowerState}
		if vm.Config != nil {
			if vm.Config.Template {
				continue
			}
			if vm.Config.CreateDate != nil {
				v.created = *vm.Config.CreateDate
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// findVM is the VM called name in folder, or nil.
func (p *Provider) findVM(ctx context.Context, op string, folder *object.Folder, name string) (*object.VirtualMachine, error) {
	ref, err := p.findChild(ctx, op, folder, name, "VirtualMachine")
	if err != nil || ref == nil {
		return nil, err
	}
	return object.NewVirtualMachine(p.client.Client, *ref), nil
}
