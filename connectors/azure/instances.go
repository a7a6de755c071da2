package azure

import (
	"context"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"

	"github.com/hanzoai/visor-fleet/connectors"
)

// group is a scale set as a node group, with its VMs.
func (p *Provider) group(ctx context.Context, op string, set *armcompute.VirtualMachineScaleSet) (connectors.NodeGroup, error) {
	name := deref(set.Name)
	vms, err := p.instances(ctx, op, name)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	g := connectors.NodeGroup{ID: name, Name: name, Labels: map[string]string{}}
	if set.SKU != nil {
		g.Size = deref(set.SKU.Name)
		if set.SKU.Capacity != nil {
			g.TargetSize = int(*set.SKU.Capacity)
		}
	}
	for k, v := range set.Tags {
		if !reservedTag(k) && v != nil {
			g.Labels[tagLabel(k)] = *v
		}
	}
	for _, vm := range vms {
		g.Instances = append(g.Instances, instanceOf(vm))
	}
	return g, nil
}

func (p *Provider) instances(ctx context.Context, op, setName string) ([]*armcompute.VirtualMachineScaleSetVM, error) {
	var out []*armcompute.VirtualMachineScaleSetVM
	pages := p.vms.NewListPager(p.cfg.ResourceGroup, setName, nil)
	for pages.More() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, p.classify(op, err)
		}
		for _, vm := range page.Value {
			if vm != nil {
				out = append(out, vm)
			}
		}
	}
	return out, nil
}

// instanceOf: the Kubernetes node name is the VM's computer name, which
// kubeadm and the kubelet take from the hostname.
func instanceOf(vm *armcompute.VirtualMachineScaleSetVM) connectors.Instance {
	in := connectors.Instance{ID: deref(vm.InstanceID), Name: deref(vm.Name), State: connectors.InstanceRunning}
	if props := vm.Properties; props != nil {
		if props.OSProfile != nil && props.OSProfile.ComputerName != nil {
			in.Name = strings.ToLower(*props.OSProfile.ComputerName)
		}
		switch deref(props.ProvisioningState) {
		case "Creating", "Updating":
			in.State = connectors.InstanceCreating
		case "Deleting":
			in.State = connectors.InstanceDeleting
		}
		if props.TimeCreated != nil {
			in.CreatedAt = *props.TimeCreated
		}
	}
	return in
}

// DeleteNodes deletes the named VMs (by node name, VM name or instance
// ID); Azure lowers the capacity by as many, so none is replaced. A VM
// already gone or being deleted is not asked for again.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	if _, err := p.managed(ctx, op, groupID); err != nil {
		return err
	}
	vms, err := p.instances(ctx, op, groupID)
	if err != nil {
		return err
	}
	var ids []*string
	for _, vm := range vms {
		in := instanceOf(vm)
		if in.State == connectors.InstanceDeleting {
			continue
		}
		for _, n := range nodeNames {
			if strings.EqualFold(n, in.Name) || n == in.ID || n == deref(vm.Name) {
				ids = append(ids, vm.InstanceID)
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	poller, err := p.sets.BeginDeleteInstances(ctx, p.cfg.ResourceGroup, groupID,
		armcompute.VirtualMachineScaleSetVMInstanceRequiredIDs{InstanceIDs: ids}, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: p.poll})
	}
	if isNotFound(err) {
		return nil
	}
	return p.classify(op, err)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
