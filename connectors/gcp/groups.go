package gcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	compute "google.golang.org/api/compute/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// NodeGroups lists the pool's MIGs, found by the pool's name prefix and
// known by their description, with their instances.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	label := pool.NodePoolLabel()
	var migs []*compute.InstanceGroupManager
	err := p.svc.InstanceGroupManagers.List(p.cfg.Project, p.cfg.Zone).Filter("name eq "+GroupPrefix(label)+".*").
		Pages(ctx, func(page *compute.InstanceGroupManagerList) error {
			for _, m := range page.Items {
				if d, ok := readDescription(m.Description); ok && d.Visor.Pool == label {
					migs = append(migs, m)
				}
			}
			return nil
		})
	if err != nil {
		return nil, p.classify(op, err)
	}
	groups := make([]connectors.NodeGroup, 0, len(migs))
	for _, m := range migs {
		g, err := p.group(ctx, op, m)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b connectors.NodeGroup) int { return strings.Compare(a.ID, b.ID) })
	return groups, nil
}

// CreateNodeGroup makes the pool's MIG of spec.Size (and its template) at
// the target. The names come from the pool and size, so a repeat (the
// answer lost, the activity retried) finds what the first call made and
// only sets its target.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	if err := p.checkSpec(ctx, spec); err != nil {
		return connectors.NodeGroup{}, invalid(op, err)
	}
	label := spec.Pool.NodePoolLabel()
	desc, err := describe(label, spec.Size, key, spec.Labels)
	if err != nil {
		return connectors.NodeGroup{}, invalid(op, err)
	}
	name := GroupName(label, spec.Size)
	mig, err := p.svc.InstanceGroupManagers.Get(p.cfg.Project, p.cfg.Zone, name).Context(ctx).Do()
	switch {
	case err == nil:
		if d, ok := readDescription(mig.Description); !ok || d.Visor.Pool != label {
			return connectors.NodeGroup{}, invalid(op, fmt.Errorf("instance group %s exists but is not the group of pool %s", name, label))
		}
		if err := p.resize(ctx, op, mig, spec.TargetSize, key); err != nil {
			return connectors.NodeGroup{}, err
		}
	case isNotFound(err):
		if err := p.insert(ctx, op, name, desc, spec, key); err != nil {
			return connectors.NodeGroup{}, err
		}
	default:
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	if mig, err = p.svc.InstanceGroupManagers.Get(p.cfg.Project, p.cfg.Zone, name).Context(ctx).Do(); err != nil {
		return connectors.NodeGroup{}, p.classify(op, err)
	}
	return p.group(ctx, op, mig)
}

// checkSpec checks what is GCP's own in the spec: a machine type of the
// catalog, and an image for it. The pool, target and key were checked by
// connectors.Checked, which wraps every provider a worker builds.
func (p *Provider) checkSpec(ctx context.Context, spec connectors.NodeGroupSpec) error {
	catalog, _ := p.Catalog(ctx)
	if !machineTypeRE.MatchString(spec.Size) || !slices.ContainsFunc(catalog, func(it types.InstanceType) bool { return it.Name == spec.Size }) {
		return fmt.Errorf("spec.size %q is not a machine type of the GCP catalog", spec.Size)
	}
	if spec.Zone != "" && spec.Zone != p.cfg.Zone {
		// The provider's groups are zonal MIGs in its one zone: a group
		// pinned elsewhere would silently land here.
		return fmt.Errorf("spec.zone %q: this gcp provider runs its groups in zone %s only", spec.Zone, p.cfg.Zone)
	}
	if isArm(spec.Size) && p.cfg.ImageArm64 == "" {
		return fmt.Errorf("spec.size %s is an Arm machine type and the gcp section sets no imageArm64", spec.Size)
	}
	return nil
}

// insert makes the template, then the MIG, and waits for both.
func (p *Provider) insert(ctx context.Context, op, name, desc string, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) error {
	tmpl := p.template(name, desc, spec.Size)
	err := p.do(ctx, func() (*compute.Operation, error) {
		return p.svc.InstanceTemplates.Insert(p.cfg.Project, tmpl).RequestId(requestID(key, "template", name)).Context(ctx).Do()
	})
	if isAlreadyExists(err) {
		got, getErr := p.svc.InstanceTemplates.Get(p.cfg.Project, name).Context(ctx).Do()
		if getErr != nil {
			return p.classify(op, getErr)
		}
		if d, ok := readDescription(got.Description); !ok || d.Visor.Pool != spec.Pool.NodePoolLabel() {
			return invalid(op, fmt.Errorf("instance template %s exists but is not the template of pool %s", name, spec.Pool.NodePoolLabel()))
		}
		err = nil
	}
	if err != nil {
		return p.classify(op, err)
	}
	mig := &compute.InstanceGroupManager{
		Name: name, Description: desc, BaseInstanceName: baseInstanceName(name),
		InstanceTemplate: "projects/" + p.cfg.Project + "/global/instanceTemplates/" + name,
		TargetSize:       int64(spec.TargetSize),
		// A template change never replaces running nodes.
		UpdatePolicy:    &compute.InstanceGroupManagerUpdatePolicy{Type: "OPPORTUNISTIC"},
		ForceSendFields: []string{"TargetSize"},
	}
	err = p.do(ctx, func() (*compute.Operation, error) {
		return p.svc.InstanceGroupManagers.Insert(p.cfg.Project, p.cfg.Zone, mig).RequestId(requestID(key, "group", name)).Context(ctx).Do()
	})
	if err != nil && !isAlreadyExists(err) {
		return p.classify(op, err)
	}
	return p.refusedInstances(ctx, op, name)
}

// template is the instance template of a new group.
func (p *Provider) template(name, desc, machineType string) *compute.InstanceTemplate {
	image := p.cfg.Image
	if isArm(machineType) {
		image = p.cfg.ImageArm64
	}
	network := p.cfg.Network
	if network == "" {
		network = "global/networks/default"
	}
	nic := &compute.NetworkInterface{Network: network, Subnetwork: p.cfg.Subnetwork}
	if p.cfg.ExternalIP {
		nic.AccessConfigs = []*compute.AccessConfig{{Name: "External NAT", Type: "ONE_TO_ONE_NAT"}}
	}
	props := &compute.InstanceProperties{
		MachineType: machineType,
		Labels:      map[string]string{LabelPool: poolHashOfDescription(desc), LabelGroup: name},
		Disks: []*compute.AttachedDisk{{
			Boot: true, AutoDelete: true, Type: "PERSISTENT",
			InitializeParams: &compute.AttachedDiskInitializeParams{
				SourceImage: image, DiskSizeGb: int64(p.bootDiskGB()), DiskType: cmpOr(p.cfg.BootDiskType, "pd-balanced"),
			},
		}},
		NetworkInterfaces: []*compute.NetworkInterface{nic},
		Scheduling:        &compute.Scheduling{AutomaticRestart: boolPtr(true), OnHostMaintenance: "MIGRATE"},
	}
	if hasGPU(machineType) {
		props.Scheduling.OnHostMaintenance = "TERMINATE"
	}
	if len(p.cfg.NetworkTags) > 0 {
		props.Tags = &compute.Tags{Items: slices.Clone(p.cfg.NetworkTags)}
	}
	if p.cfg.ServiceAccount != "" {
		props.ServiceAccounts = []*compute.ServiceAccount{{Email: p.cfg.ServiceAccount, Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}}}
	}
	if p.userData != "" {
		ud := p.userData
		props.Metadata = &compute.Metadata{Items: []*compute.MetadataItems{{Key: "user-data", Value: &ud}}}
	}
	return &compute.InstanceTemplate{Name: name, Description: desc, Properties: props}
}

func poolHashOfDescription(desc string) string {
	d, _ := readDescription(desc)
	return poolHash(d.Visor.Pool)
}

func boolPtr(b bool) *bool { return &b }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// SetTargetSize resizes the MIG; the same target is a no-op, and a
// retried resize carries the first one's requestId.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	mig, err := p.managed(ctx, op, groupID)
	if err != nil {
		return err
	}
	return p.resize(ctx, op, mig, target, key)
}

func (p *Provider) resize(ctx context.Context, op string, mig *compute.InstanceGroupManager, target int, key connectors.IdempotencyKey) error {
	if mig.TargetSize == int64(target) {
		return nil
	}
	err := p.do(ctx, func() (*compute.Operation, error) {
		return p.svc.InstanceGroupManagers.Resize(p.cfg.Project, p.cfg.Zone, mig.Name, int64(target)).
			RequestId(requestID(key, "resize", mig.Name, fmt.Sprint(target))).Context(ctx).Do()
	})
	if err != nil {
		return p.classify(op, err)
	}
	if int64(target) > mig.TargetSize {
		return p.refusedInstances(ctx, op, mig.Name)
	}
	return nil
}

// managed gets a MIG Visor manages: one without its description is
// refused, so no hand-made group is ever resized or deleted.
func (p *Provider) managed(ctx context.Context, op, name string) (*compute.InstanceGroupManager, error) {
	mig, err := p.svc.InstanceGroupManagers.Get(p.cfg.Project, p.cfg.Zone, name).Context(ctx).Do()
	if err != nil {
		return nil, p.classify(op, err)
	}
	if _, ok := readDescription(mig.Description); !ok {
		return nil, invalid(op, fmt.Errorf("instance group %s was not made by Visor (its description does not name a pool)", name))
	}
	return mig, nil
}

// DeleteNodeGroup deletes the MIG, its instances and its template; a
// group already gone is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	if _, err := p.managed(ctx, op, groupID); err != nil {
		if errclass.IsNotFound(err) {
			return p.deleteTemplate(ctx, op, groupID, key)
		}
		return err
	}
	err := p.do(ctx, func() (*compute.Operation, error) {
		return p.svc.InstanceGroupManagers.Delete(p.cfg.Project, p.cfg.Zone, groupID).RequestId(requestID(key, "delete", groupID)).Context(ctx).Do()
	})
	if err != nil && !isNotFound(err) {
		return p.classify(op, err)
	}
	return p.deleteTemplate(ctx, op, groupID, key)
}

// deleteTemplate deletes the group's template, if Visor made it.
func (p *Provider) deleteTemplate(ctx context.Context, op, name string, key connectors.IdempotencyKey) error {
	tmpl, err := p.svc.InstanceTemplates.Get(p.cfg.Project, name).Context(ctx).Do()
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return p.classify(op, err)
	}
	if _, ok := readDescription(tmpl.Description); !ok {
		return nil
	}
	err = p.do(ctx, func() (*compute.Operation, error) {
		return p.svc.InstanceTemplates.Delete(p.cfg.Project, name).RequestId(requestID(key, "delete-template", name)).Context(ctx).Do()
	})
	if err != nil && !isNotFound(err) {
		return p.classify(op, errors.Join(fmt.Errorf("instance template %s", name), err))
	}
	return nil
}
