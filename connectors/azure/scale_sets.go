package azure

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// NodeGroups lists the pool's scale sets with their VMs.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	var groups []connectors.NodeGroup
	pages := p.sets.NewListPager(p.cfg.ResourceGroup, nil)
	for pages.More() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, p.classify(op, err)
		}
		for _, set := range page.Value {
			if set == nil || !ours(set.Tags, pool) {
				continue
			}
			g, err := p.group(ctx, op, set)
			if err != nil {
				return nil, err
			}
			groups = append(groups, g)
		}
	}
	slices.SortFunc(groups, func(a, b connectors.NodeGroup) int { return strings.Compare(a.ID, b.ID) })
	return groups, nil
}

// CreateNodeGroup puts the pool's scale set of spec.Size at the target. The
// name comes from the pool and size, so a repeat (the answer lost, the
// activity retried) finds the scale set the first call made.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	for k := range spec.Labels {
		if tag := labelTag(k); reservedTag(tag) || strings.ContainsAny(tag, `<>%&\?/`) {
			return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op,
				fmt.Errorf("spec.labels: %q is reserved or not a valid Azure tag name", k))
		}
	}
	name := ScaleSetName(spec.Pool.NodePoolLabel(), spec.Size)
	existing, err := p.sets.Get(ctx, p.cfg.ResourceGroup, name, nil)
	switch {
	case err == nil && !ours(existing.Tags, spec.Pool):
		return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("scale set %s exists but is not tagged %s=%s", name, TagPool, spec.Pool.NodePoolLabel()))
	case err == nil:
		if err := p.setCapacity(ctx, op, name, existing.SKU, spec.TargetSize); err != nil {
			return connectors.NodeGroup{}, err
		}
	case isNotFound(err):
		if err := p.put(ctx, op, name, spec, key); err != nil {
			return connectors.NodeGroup{}, err
		}
	default:
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	got, err := p.sets.Get(ctx, p.cfg.ResourceGroup, name, nil)
	if err != nil {
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	return p.group(ctx, op, &got.VirtualMachineScaleSet)
}

// put creates the scale set and waits for ARM to finish.
func (p *Provider) put(ctx context.Context, op, name string, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) error {
	set, err := p.scaleSet(spec, name, key)
	if err != nil {
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	poller, err := p.sets.BeginCreateOrUpdate(ctx, p.cfg.ResourceGroup, name, set, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: p.poll})
	}
	return p.classify(op, err)
}

// scaleSet is the model of a new scale set: Uniform, manual upgrades (a
// model change never replaces running nodes), capacity the target.
func (p *Provider) scaleSet(spec connectors.NodeGroupSpec, name string, key connectors.IdempotencyKey) (armcompute.VirtualMachineScaleSet, error) {
	image, err := imageReference(p.cfg.Image)
	if err != nil {
		return armcompute.VirtualMachineScaleSet{}, err
	}
	tags := map[string]*string{}
	for k, v := range spec.Labels {
		tags[labelTag(k)] = to.Ptr(v)
	}
	tags[TagPool] = to.Ptr(spec.Pool.NodePoolLabel())
	tags[TagSize] = to.Ptr(spec.Size)
	tags[TagKey] = to.Ptr(keyTag(key))
	osProfile := &armcompute.VirtualMachineScaleSetOSProfile{
		ComputerNamePrefix: to.Ptr(computerNamePrefix(name)),
		AdminUsername:      to.Ptr(p.adminUsername()),
		LinuxConfiguration: &armcompute.LinuxConfiguration{
			DisablePasswordAuthentication: to.Ptr(true),
			SSH: &armcompute.SSHConfiguration{PublicKeys: []*armcompute.SSHPublicKey{{
				Path: to.Ptr("/home/" + p.adminUsername() + "/.ssh/authorized_keys"), KeyData: to.Ptr(p.cfg.SSHPublicKey),
			}}},
		},
	}
	if p.customData != "" {
		osProfile.CustomData = to.Ptr(base64.StdEncoding.EncodeToString([]byte(p.customData)))
	}
	return armcompute.VirtualMachineScaleSet{
		Location: to.Ptr(p.cfg.Location),
		Tags:     tags,
		SKU:      &armcompute.SKU{Name: to.Ptr(spec.Size), Tier: to.Ptr("Standard"), Capacity: to.Ptr(int64(spec.TargetSize))},
		Properties: &armcompute.VirtualMachineScaleSetProperties{
			OrchestrationMode: to.Ptr(armcompute.OrchestrationModeUniform),
			UpgradePolicy:     &armcompute.UpgradePolicy{Mode: to.Ptr(armcompute.UpgradeModeManual)},
			VirtualMachineProfile: &armcompute.VirtualMachineScaleSetVMProfile{
				OSProfile: osProfile,
				StorageProfile: &armcompute.VirtualMachineScaleSetStorageProfile{
					ImageReference: image,
					OSDisk: &armcompute.VirtualMachineScaleSetOSDisk{
						CreateOption: to.Ptr(armcompute.DiskCreateOptionTypesFromImage),
						DiskSizeGB:   to.Ptr(int32(osDiskGB)),
					},
				},
				NetworkProfile: &armcompute.VirtualMachineScaleSetNetworkProfile{
					NetworkInterfaceConfigurations: []*armcompute.VirtualMachineScaleSetNetworkConfiguration{{
						Name: to.Ptr(name + "-nic"),
						Properties: &armcompute.VirtualMachineScaleSetNetworkConfigurationProperties{
							Primary: to.Ptr(true),
							IPConfigurations: []*armcompute.VirtualMachineScaleSetIPConfiguration{{
								Name: to.Ptr("ipconfig"),
								Properties: &armcompute.VirtualMachineScaleSetIPConfigurationProperties{
									Subnet: &armcompute.APIEntityReference{ID: to.Ptr(p.cfg.SubnetID)},
								},
							}},
						},
					}},
				},
			},
		},
	}, nil
}

// imageReference reads an ARM ID or PUBLISHER:OFFER:SKU:VERSION.
func imageReference(image string) (*armcompute.ImageReference, error) {
	if strings.HasPrefix(image, "/") {
		return &armcompute.ImageReference{ID: to.Ptr(image)}, nil
	}
	parts := strings.Split(image, ":")
	if len(parts) != 4 || slices.Contains(parts, "") {
		return nil, errors.New("image must be an ARM ID or PUBLISHER:OFFER:SKU:VERSION, got " + image)
	}
	return &armcompute.ImageReference{Publisher: &parts[0], Offer: &parts[1], SKU: &parts[2], Version: &parts[3]}, nil
}

// SetTargetSize sets the scale set's capacity; the same target is a no-op.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, _ connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	set, err := p.managed(ctx, op, groupID)
	if err != nil {
		return err
	}
	return p.setCapacity(ctx, op, groupID, set.SKU, target)
}

func (p *Provider) setCapacity(ctx context.Context, op, name string, sku *armcompute.SKU, target int) error {
	if sku != nil && sku.Capacity != nil && *sku.Capacity == int64(target) {
		return nil
	}
	poller, err := p.sets.BeginUpdate(ctx, p.cfg.ResourceGroup, name, armcompute.VirtualMachineScaleSetUpdate{
		SKU: &armcompute.SKU{Capacity: to.Ptr(int64(target))},
	}, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: p.poll})
	}
	return p.classify(op, err)
}

// managed gets a scale set Visor manages: one without the pool tag is
// refused, so no hand-made scale set is ever resized or deleted.
func (p *Provider) managed(ctx context.Context, op, name string) (armcompute.VirtualMachineScaleSet, error) {
	got, err := p.sets.Get(ctx, p.cfg.ResourceGroup, name, nil)
	if err != nil {
		return armcompute.VirtualMachineScaleSet{}, p.classify(op, err)
	}
	if got.Tags[TagPool] == nil {
		return armcompute.VirtualMachineScaleSet{}, errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("scale set %s has no %s tag: Visor does not manage it", name, TagPool))
	}
	return got.VirtualMachineScaleSet, nil
}

// DeleteNodeGroup deletes the scale set and its VMs; gone is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	if _, err := p.managed(ctx, op, groupID); err != nil {
		if errclass.IsNotFound(err) {
			return nil
		}
		return err
	}
	poller, err := p.sets.BeginDelete(ctx, p.cfg.ResourceGroup, groupID, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: p.poll})
	}
	if isNotFound(err) {
		return nil
	}
	return p.classify(op, err)
}
