package aws

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ec2Mode: a node group is a launch template tagged hanzo.ai/pool (it holds
// the size and image, and anchors the group while it has no instances);
// its members are instances tagged hanzo.ai/group=<template name>. The
// target size is the number of members not shutting down.
type ec2Mode struct{ p *Provider }

func (m *ec2Mode) nodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = "NodeGroups"
	pages := ec2.NewDescribeLaunchTemplatesPaginator(m.p.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + tagPool), Values: []string{pool.NodePoolLabel()}}},
	})
	var out []connectors.NodeGroup
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, m.p.classify(op+": ec2:DescribeLaunchTemplates", err)
		}
		for _, lt := range page.LaunchTemplates {
			ng, err := m.nodeGroup(ctx, op, lt)
			if err != nil {
				return nil, err
			}
			out = append(out, ng)
		}
	}
	return out, nil
}

func (m *ec2Mode) nodeGroup(ctx context.Context, op string, lt ec2types.LaunchTemplate) (connectors.NodeGroup, error) {
	name := aws.ToString(lt.LaunchTemplateName)
	all, err := m.members(ctx, op, name)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	tags := ec2TagMap(lt.Tags)
	ng := connectors.NodeGroup{ID: name, Name: name, Size: tags[tagSize], Labels: labelsFromTags(tags), Instances: []connectors.Instance{}}
	setOffering(&ng)
	for _, i := range all {
		if stateName(i) == ec2types.InstanceStateNameTerminated {
			continue
		}
		ng.Instances = append(ng.Instances, instanceOf(i))
		if !isGone(i) {
			ng.TargetSize++
		}
	}
	return ng, nil
}

func (m *ec2Mode) template(ctx context.Context, op, name string) (ec2types.LaunchTemplate, error) {
	out, err := m.p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err != nil {
		return ec2types.LaunchTemplate{}, m.p.classify(op+": ec2:DescribeLaunchTemplates "+name, err)
	}
	if len(out.LaunchTemplates) == 0 {
		return ec2types.LaunchTemplate{}, errclass.New(errclass.NotFound, ProviderName, op,
			fmt.Errorf("launch template %q does not exist", name))
	}
	return out.LaunchTemplates[0], nil
}

// members are every instance tagged into the group, terminated ones too:
// their launch tokens stay used.
func (m *ec2Mode) members(ctx context.Context, op, group string) ([]ec2types.Instance, error) {
	return m.p.describeInstances(ctx, op, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + tagGroup), Values: []string{group}}},
	})
}

// setTargetSize launches or terminates instances until target are live.
// Idempotency does not rest on EC2 alone: each launch is tagged with its
// ClientToken, and a token already on any member is never launched again,
// so a retry that can see the first attempt's instances adds none; a retry
// that cannot see them yet reuses their tokens, which EC2 deduplicates.
func (m *ec2Mode) setTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = "SetTargetSize"
	lt, err := m.template(ctx, op, groupID)
	if err != nil {
		return err
	}
	all, err := m.members(ctx, op, groupID)
	if err != nil {
		return err
	}
	var live []ec2types.Instance
	used := map[string]bool{}
	for _, i := range all {
		used[ec2TagMap(i.Tags)[tagLaunchToken]] = true
		if !isGone(i) {
			live = append(live, i)
		}
	}
	switch {
	case len(live) > target:
		return m.terminateNewest(ctx, op, live, len(live)-target)
	case len(live) < target:
		return m.launch(ctx, op, lt, target-len(live), used, key)
	}
	return nil
}

func (m *ec2Mode) launch(ctx context.Context, op string, lt ec2types.LaunchTemplate, count int, used map[string]bool, key connectors.IdempotencyKey) error {
	group := aws.ToString(lt.LaunchTemplateName)
	groupTags := ec2TagMap(lt.Tags)
	ct, zone := offeringFromLabels(groupTags)
	for ordinal, launched := 0, 0; launched < count; ordinal++ {
		token := ClientToken(key, group, ordinal)
		if used[token] {
			continue
		}
		tags := labelsFromTags(groupTags)
		tags[tagPool] = groupTags[tagPool]
		tags[tagSize] = groupTags[tagSize]
		tags[tagGroup] = group
		tags[tagLaunchToken] = token
		in := &ec2.RunInstancesInput{
			MinCount:    aws.Int32(1),
			MaxCount:    aws.Int32(1),
			ClientToken: aws.String(token),
			LaunchTemplate: &ec2types.LaunchTemplateSpecification{
				LaunchTemplateName: aws.String(group),
				Version:            aws.String("$Default"),
			},
			TagSpecifications:     []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2Tags(tags)}},
			InstanceMarketOptions: ec2Market(ct),
		}
		// By ordinal, so a retried token carries identical parameters. A
		// group pinned to a zone is placed there (in the zone's default
		// subnet: the configured subnets may lie in other zones).
		if subnets := m.p.cfg.Subnets; len(subnets) > 0 && zone == "" {
			in.SubnetId = aws.String(subnets[ordinal%len(subnets)])
		}
		if zone != "" {
			in.Placement = &ec2types.Placement{AvailabilityZone: aws.String(zone)}
		}
		if _, err := m.p.ec2.RunInstances(ctx, in); err != nil {
			return m.p.classify(op+": ec2:RunInstances", err)
		}
		launched++
	}
	return nil
}

// terminateNewest removes the n most recently launched instances: the
// oldest have proven themselves and carry the longest-running pods.
func (m *ec2Mode) terminateNewest(ctx context.Context, op string, live []ec2types.Instance, n int) error {
	sort.Slice(live, func(a, b int) bool {
		ta, tb := aws.ToTime(live[a].LaunchTime), aws.ToTime(live[b].LaunchTime)
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return aws.ToString(live[a].InstanceId) > aws.ToString(live[b].InstanceId)
	})
	ids := make([]string, 0, n)
	for _, i := range live[:n] {
		ids = append(ids, aws.ToString(i.InstanceId))
	}
	_, err := m.p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	return m.p.classify(op+": ec2:TerminateInstances", err)
}

// createNodeGroup makes sure the group's launch template exists, then
// brings it to the target; both steps are safe to repeat, so a retry after
// a crash between them finishes the job.
func (m *ec2Mode) createNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, name string, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = "CreateNodeGroup"
	lt, err := m.template(ctx, op, name)
	switch {
	case errclass.IsNotFound(err):
		if lt, err = m.createTemplate(ctx, op, spec, name, key); err != nil {
			return connectors.NodeGroup{}, err
		}
	case err != nil:
		return connectors.NodeGroup{}, err
	}
	if got := ec2TagMap(lt.Tags)[tagPool]; got != spec.Pool.NodePoolLabel() {
		return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("launch template %s exists with %s=%q, not %q", name, tagPool, got, spec.Pool.NodePoolLabel()))
	}
	if err := m.setTargetSize(ctx, name, spec.TargetSize, key); err != nil {
		return connectors.NodeGroup{}, err
	}
	return m.nodeGroup(ctx, op, lt)
}

func (m *ec2Mode) createTemplate(ctx context.Context, op string, spec connectors.NodeGroupSpec, name string, key connectors.IdempotencyKey) (ec2types.LaunchTemplate, error) {
	if m.p.cfg.ImageID == "" {
		return ec2types.LaunchTemplate{}, invalid(op, errors.New(`Config.ImageID is required to create groups in mode "ec2"`))
	}
	_, err := m.p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		ClientToken:        aws.String(ClientToken(key, "launch-template/"+name, 0)),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId:          aws.String(m.p.cfg.ImageID),
			InstanceType:     ec2types.InstanceType(spec.Size),
			SecurityGroupIds: m.p.cfg.SecurityGroupIDs,
		},
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags:         ec2Tags(groupTags(withOfferingLabels(spec), spec.Pool.NodePoolLabel(), spec.Size)),
		}},
	})
	if err != nil && errorCode(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		return ec2types.LaunchTemplate{}, m.p.classify(op+": ec2:CreateLaunchTemplate", err)
	}
	return m.template(ctx, op, name)
}

// deleteNodeGroup terminates every live member, then deletes the launch
// template: in that order, so a retry after a failure in between still
// finds the group by its template.
func (m *ec2Mode) deleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = "DeleteNodeGroup"
	lt, err := m.template(ctx, op, groupID)
	if err != nil {
		return err
	}
	if ec2TagMap(lt.Tags)[tagPool] == "" {
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("launch template %s has no %s tag: Visor does not manage it", groupID, tagPool))
	}
	all, err := m.members(ctx, op, groupID)
	if err != nil {
		return err
	}
	var ids []string
	for _, i := range all {
		if !isGone(i) {
			ids = append(ids, aws.ToString(i.InstanceId))
		}
	}
	if len(ids) > 0 {
		if _, err := m.p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}); err != nil {
			return m.p.classify(op+": ec2:TerminateInstances", err)
		}
	}
	_, err = m.p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(groupID)})
	if errorCode(err) == "InvalidLaunchTemplateName.NotFoundException" {
		return nil
	}
	return m.p.classify(op+": ec2:DeleteLaunchTemplate", err)
}

func (m *ec2Mode) deleteNodes(ctx context.Context, groupID string, nodeNames []string) error {
	const op = "DeleteNodes"
	found, err := m.p.instancesByNodeName(ctx, op, nodeNames)
	if err != nil {
		return err
	}
	var ids []string
	for _, name := range nodeNames {
		i, ok := found[name]
		if !ok || isGone(i) {
			continue
		}
		if got := ec2TagMap(i.Tags)[tagGroup]; got != groupID {
			return errclass.New(errclass.Permanent, ProviderName, op,
				fmt.Errorf("node %s (instance %s) is not in group %s", name, aws.ToString(i.InstanceId), groupID))
		}
		ids = append(ids, aws.ToString(i.InstanceId))
	}
	if len(ids) == 0 {
		return nil
	}
	_, err = m.p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	return m.p.classify(op+": ec2:TerminateInstances", err)
}
