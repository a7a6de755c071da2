package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// asgMode: a node group is an EC2 Auto Scaling group tagged hanzo.ai/pool.
type asgMode struct{ p *Provider }

func (m *asgMode) nodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = "NodeGroups"
	pages := autoscaling.NewDescribeAutoScalingGroupsPaginator(m.p.asg, &autoscaling.DescribeAutoScalingGroupsInput{
		Filters: []asgtypes.Filter{{Name: aws.String("tag:" + tagPool), Values: []string{pool.NodePoolLabel()}}},
	})
	var out []connectors.NodeGroup
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, m.p.classify(op+": autoscaling:DescribeAutoScalingGroups", err)
		}
		for _, g := range page.AutoScalingGroups {
			ng, err := m.nodeGroup(ctx, op, g)
			if err != nil {
				return nil, err
			}
			out = append(out, ng)
		}
	}
	return out, nil
}

func (m *asgMode) nodeGroup(ctx context.Context, op string, g asgtypes.AutoScalingGroup) (connectors.NodeGroup, error) {
	instances, err := m.p.asgInstances(ctx, op, g)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	tags := asgTagMap(g.Tags)
	size := tags[tagSize]
	if mip := g.MixedInstancesPolicy; mip != nil && mip.LaunchTemplate != nil && len(mip.LaunchTemplate.Overrides) > 0 {
		if t := aws.ToString(mip.LaunchTemplate.Overrides[0].InstanceType); t != "" {
			size = t
		}
	}
	name := aws.ToString(g.AutoScalingGroupName)
	ng := connectors.NodeGroup{
		ID: name, Name: name, Size: size,
		TargetSize: int(aws.ToInt32(g.DesiredCapacity)),
		Instances:  instances,
		Labels:     labelsFromTags(tags),
	}
	setOffering(&ng)
	if mip := g.MixedInstancesPolicy; mip != nil && mip.InstancesDistribution != nil && aws.ToInt32(mip.InstancesDistribution.OnDemandPercentageAboveBaseCapacity) == 0 && aws.ToInt32(mip.InstancesDistribution.OnDemandBaseCapacity) == 0 {
		ng.CapacityType = types.CapacitySpot
	}
	if g.Status != nil { // "Delete in progress": nothing of it stays
		markDeleting(&ng)
	}
	return ng, nil
}

// deleteNodeGroup deletes the group with ForceDelete, which terminates its
// instances without waiting for them to leave first. A group another pool
// owns is refused.
func (m *asgMode) deleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = "DeleteNodeGroup"
	g, err := m.p.describeASG(ctx, op, groupID)
	if err != nil {
		return err
	}
	if asgTagMap(g.Tags)[tagPool] == "" {
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("auto scaling group %s has no %s tag: Visor does not manage it", groupID, tagPool))
	}
	if g.Status != nil {
		return nil // already being deleted
	}
	_, err = m.p.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(groupID),
		ForceDelete:          aws.Bool(true),
	})
	if errorCode(err) == "ValidationError" && strings.Contains(err.Error(), "not found") {
		return nil
	}
	return m.p.classify(op+": autoscaling:DeleteAutoScalingGroup", err)
}

// setTargetSize sets an absolute desired capacity, which is idempotent by
// itself; MinSize and MaxSize are widened when the target lies outside.
func (m *asgMode) setTargetSize(ctx context.Context, groupID string, target int, _ connectors.IdempotencyKey) error {
	const op = "SetTargetSize"
	g, err := m.p.describeASG(ctx, op, groupID)
	if err != nil {
		return err
	}
	t := int32(target)
	if aws.ToInt32(g.DesiredCapacity) == t {
		return nil
	}
	minSize, maxSize := aws.ToInt32(g.MinSize), aws.ToInt32(g.MaxSize)
	if t >= minSize && t <= maxSize {
		_, err = m.p.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{
			AutoScalingGroupName: aws.String(groupID),
			DesiredCapacity:      aws.Int32(t),
			HonorCooldown:        aws.Bool(false),
		})
		return m.p.classify(op+": autoscaling:SetDesiredCapacity", err)
	}
	_, err = m.p.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(groupID),
		DesiredCapacity:      aws.Int32(t),
		MinSize:              aws.Int32(min(minSize, t)),
		MaxSize:              aws.Int32(max(maxSize, t)),
	})
	return m.p.classify(op+": autoscaling:UpdateAutoScalingGroup", err)
}

// createNodeGroup looks the key-derived name up first: moto (and a racing
// retry) may not answer AlreadyExists, and a second CreateAutoScalingGroup
// must never run for a group that exists.
func (m *asgMode) createNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, name string, _ connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = "CreateNodeGroup"
	g, err := m.p.describeASG(ctx, op, name)
	if err == nil {
		return m.owned(ctx, op, g, spec.Pool)
	}
	if !errclass.IsNotFound(err) {
		return connectors.NodeGroup{}, err
	}
	if m.p.cfg.LaunchTemplate == "" {
		return connectors.NodeGroup{}, invalid(op, errors.New(`Config.LaunchTemplate is required to create groups in mode "asg"`))
	}
	var tags []asgtypes.Tag
	for k, v := range groupTags(withOfferingLabels(spec), spec.Pool.NodePoolLabel(), spec.Size) {
		tags = append(tags, asgtypes.Tag{
			Key: aws.String(k), Value: aws.String(v), PropagateAtLaunch: aws.Bool(true),
			ResourceId: aws.String(name), ResourceType: aws.String("auto-scaling-group"),
		})
	}
	in := &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		MinSize:              aws.Int32(0),
		MaxSize:              aws.Int32(int32(max(spec.TargetSize, 1))),
		DesiredCapacity:      aws.Int32(int32(spec.TargetSize)),
		MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{
			LaunchTemplate: &asgtypes.LaunchTemplate{
				LaunchTemplateSpecification: &asgtypes.LaunchTemplateSpecification{
					LaunchTemplateName: aws.String(m.p.cfg.LaunchTemplate),
					Version:            aws.String("$Default"),
				},
				Overrides: []asgtypes.LaunchTemplateOverrides{{InstanceType: aws.String(spec.Size)}},
			},
			InstancesDistribution: asgDistribution(spec.CapacityType.Or()),
		},
		Tags: tags,
	}
	switch {
	case spec.Zone != "":
		// Pinned: the zone, not the configured subnets (which may lie
		// in other zones).
		in.AvailabilityZones = []string{spec.Zone}
	case len(m.p.cfg.Subnets) > 0:
		in.VPCZoneIdentifier = aws.String(strings.Join(m.p.cfg.Subnets, ","))
	}
	if _, err := m.p.asg.CreateAutoScalingGroup(ctx, in); err != nil && errorCode(err) != "AlreadyExists" {
		return connectors.NodeGroup{}, m.p.classify(op+": autoscaling:CreateAutoScalingGroup", err)
	}
	if g, err = m.p.describeASG(ctx, op, name); err != nil {
		return connectors.NodeGroup{}, err
	}
	return m.owned(ctx, op, g, spec.Pool)
}

// owned returns g as a node group if it carries the pool's tag; a group of
// the same name owned by another pool is never adopted.
func (m *asgMode) owned(ctx context.Context, op string, g asgtypes.AutoScalingGroup, pool types.PoolKey) (connectors.NodeGroup, error) {
	if got := asgTagMap(g.Tags)[tagPool]; got != pool.NodePoolLabel() {
		return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("auto scaling group %s exists with %s=%q, not %q", aws.ToString(g.AutoScalingGroupName), tagPool, got, pool.NodePoolLabel()))
	}
	return m.nodeGroup(ctx, op, g)
}

func (m *asgMode) deleteNodes(ctx context.Context, groupID string, nodeNames []string) error {
	const op = "DeleteNodes"
	g, err := m.p.describeASG(ctx, op, groupID)
	if err != nil {
		return err
	}
	return m.p.terminateInASG(ctx, op, g, nodeNames, true)
}
