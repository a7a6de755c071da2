package aliyun

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	ecs "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// maxRunAmount is RunInstances' documented limit per call.
const maxRunAmount = 100

// SetTargetSize makes the group hold target instances: the missing ones
// are created by one RunInstances whose ClientToken names the decision,
// or the newest are released down to target. Instances key already made
// count toward the target, so a retry asks ECS the same question again
// and gets the same instances back instead of new ones.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	g, err := parseGroupID(groupID)
	if err != nil {
		return invalid(op, err)
	}
	live, err := p.groupInstances(ctx, op, g) // oldest first
	if err != nil {
		return err
	}
	remove, create := connectors.PlanTarget(live, target, func(i instance) bool { return i.tags[TagKey] == connectors.KeyTag(key) })
	if create > 0 {
		return p.run(ctx, op, g, key, create, live, nil)
	}
	return p.deleteInstances(ctx, op, remove)
}

// CreateNodeGroup creates spec.TargetSize instances of spec.Size for the
// pool and returns the group; a repeat with the same key creates nothing
// new. spec.Labels become instance tags (up to ECS's 20 per instance,
// three of them Visor's). Kubernetes node labels and taints come from the
// cluster-join user data.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	if !instanceTypeRE.MatchString(spec.Size) {
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.size %q is not an ECS instance type such as ecs.g7.large", spec.Size))
	}
	if len(spec.Labels) > 17 {
		return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.labels: %d labels; ECS allows 20 tags per instance, 3 of them Visor's", len(spec.Labels)))
	}
	for k := range spec.Labels {
		if strings.HasPrefix(k, "visor-") || strings.HasPrefix(k, "aliyun") || strings.HasPrefix(k, "acs:") {
			return connectors.NodeGroup{}, invalid(op, fmt.Errorf("spec.labels: %s is reserved (visor-, aliyun, acs: are not tenant tags)", k))
		}
	}
	g := group{poolLabel: spec.Pool.NodePoolLabel(), size: spec.Size}
	live, err := p.groupInstances(ctx, op, g)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	mine := slices.DeleteFunc(slices.Clone(live), func(i instance) bool { return i.tags[TagKey] != connectors.KeyTag(key) })
	if len(mine) < spec.TargetSize {
		if err := p.run(ctx, op, g, key, spec.TargetSize, live, spec.Labels); err != nil {
			return connectors.NodeGroup{}, err
		}
		if live, err = p.groupInstances(ctx, op, g); err != nil {
			return connectors.NodeGroup{}, err
		}
	}
	return toNodeGroup(g, live), nil
}

// run makes key's share of the group amount instances. It asks ECS for
// all of them with one token, even when some already show, so a retry
// sends the same request as the first attempt (ECS refuses a token reused
// with other parameters).
func (p *Provider) run(ctx context.Context, op string, g group, key connectors.IdempotencyKey, amount int, live []instance, labels map[string]string) error {
	mine := 0
	for _, i := range live {
		if i.tags[TagKey] == connectors.KeyTag(key) {
			mine++
			if labels == nil { // a resize keeps the group's tenant tags
				labels = connectors.TenantTags(i.tags, "visor-")
			}
		}
	}
	if mine >= amount {
		return nil
	}
	if labels == nil && len(live) > 0 {
		labels = connectors.TenantTags(live[0].tags, "visor-")
	}
	if amount > maxRunAmount {
		return invalid(op, fmt.Errorf("%d instances in one call; RunInstances takes at most %d", amount, maxRunAmount))
	}
	tags := maps.Clone(labels)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, g.selector())
	tags[TagKey] = connectors.KeyTag(key)
	req := &ecs.RunInstancesRequest{
		RegionId: dara.String(p.cfg.RegionID), InstanceType: dara.String(g.size), ImageId: dara.String(p.cfg.ImageID),
		SecurityGroupId: dara.String(p.cfg.SecurityGroupID), VSwitchId: dara.String(p.cfg.VSwitchID),
		Amount: dara.Int32(int32(amount)), MinAmount: dara.Int32(int32(amount)),
		ClientToken:        dara.String(g.clientToken(key, amount)),
		HostName:           dara.String(g.hostName(key)),
		InstanceName:       dara.String(g.hostName(key)),
		UniqueSuffix:       dara.Bool(true),
		InstanceChargeType: dara.String("PostPaid"),
		SystemDisk: &ecs.RunInstancesRequestSystemDisk{
			Category: dara.String(cmpOr(p.cfg.SystemDiskCategory, "cloud_essd")), Size: dara.String(strconv.Itoa(p.systemDiskGiB())),
		},
	}
	if p.cfg.ZoneID != "" {
		req.ZoneId = dara.String(p.cfg.ZoneID)
	}
	if p.cfg.KeyPairName != "" {
		req.KeyPairName = dara.String(p.cfg.KeyPairName)
	}
	if p.userData != "" {
		req.UserData = dara.String(p.userData)
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		req.Tag = append(req.Tag, &ecs.RunInstancesRequestTag{Key: dara.String(k), Value: dara.String(tags[k])})
	}
	_, err := p.client.RunInstancesWithContext(ctx, req, &dara.RuntimeOptions{})
	return p.classify(op+" "+g.id(), err)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// DeleteNodes releases the named instances (a host name, which is the
// Kubernetes node name, or an instance ID) of the group. A name not in the
// group is already gone, which is success.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	g, err := parseGroupID(groupID)
	if err != nil {
		return invalid(op, err)
	}
	live, err := p.groupInstances(ctx, op, g)
	if err != nil {
		return err
	}
	return p.deleteInstances(ctx, op, matchInstances(live, nodeNames))
}

// DeleteNodeGroup releases every instance of the group; a group with none
// left is already gone.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	g, err := parseGroupID(groupID)
	if err != nil {
		return invalid(op, err)
	}
	live, err := p.groupInstances(ctx, op, g)
	if err != nil {
		return err
	}
	return p.deleteInstances(ctx, op, live)
}

// deleteInstances force-releases instances (running ones too: they have
// been drained, or never joined), at most 100 a call. When one is already
// gone ECS refuses the whole call, so the rest are then released one by
// one, the gone ones counting as success.
func (p *Provider) deleteInstances(ctx context.Context, op string, doomed []instance) error {
	for batch := range slices.Chunk(doomed, maxRunAmount) {
		ids := make([]*string, len(batch))
		for i, in := range batch {
			ids[i] = dara.String(in.id)
		}
		err := p.classify(op, p.release(ctx, ids))
		if errclass.IsNotFound(err) && len(ids) > 1 {
			for _, id := range ids {
				if err := p.classify(op+" "+*id, p.release(ctx, []*string{id})); err != nil && !errclass.IsNotFound(err) {
					return err
				}
			}
			continue
		}
		if err != nil && !errclass.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (p *Provider) release(ctx context.Context, ids []*string) error {
	_, err := p.client.DeleteInstancesWithContext(ctx, &ecs.DeleteInstancesRequest{
		RegionId: dara.String(p.cfg.RegionID), InstanceId: ids, Force: dara.Bool(true),
	}, &dara.RuntimeOptions{})
	return err
}
