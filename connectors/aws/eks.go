package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// eksMode: a node group is an EKS managed node group whose Kubernetes
// labels include hanzo.ai/pool.
type eksMode struct{ p *Provider }

func (m *eksMode) cluster() *string { return aws.String(m.p.cfg.ClusterName) }

func (m *eksMode) nodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = "NodeGroups"
	pages := eks.NewListNodegroupsPaginator(m.p.eks, &eks.ListNodegroupsInput{ClusterName: m.cluster()})
	var out []connectors.NodeGroup
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, m.p.classify(op+": eks:ListNodegroups", err)
		}
		for _, name := range page.Nodegroups {
			ng, err := m.describe(ctx, op, name)
			if errclass.IsNotFound(err) {
				continue // deleted between list and describe
			}
			if err != nil {
				return nil, err
			}
			if ng.Labels[tagPool] != pool.NodePoolLabel() {
				continue
			}
			group, err := m.nodeGroup(ctx, op, ng)
			if err != nil {
				return nil, err
			}
			out = append(out, group)
		}
	}
	return out, nil
}

func (m *eksMode) describe(ctx context.Context, op, name string) (*ekstypes.Nodegroup, error) {
	out, err := m.p.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{
		ClusterName: m.cluster(), NodegroupName: aws.String(name),
	})
	if err != nil {
		return nil, m.p.classify(op+": eks:DescribeNodegroup "+name, err)
	}
	return out.Nodegroup, nil
}

// nodeGroup converts ng; its instances are its Auto Scaling groups' members.
func (m *eksMode) nodeGroup(ctx context.Context, op string, ng *ekstypes.Nodegroup) (connectors.NodeGroup, error) {
	name := aws.ToString(ng.NodegroupName)
	group := connectors.NodeGroup{ID: name, Name: name, Labels: ng.Labels, Instances: []connectors.Instance{}}
	setOffering(&group)
	if ng.CapacityType == ekstypes.CapacityTypesSpot {
		group.CapacityType = types.CapacitySpot
	}
	if len(ng.InstanceTypes) > 0 {
		group.Size = ng.InstanceTypes[0]
	}
	if sc := ng.ScalingConfig; sc != nil {
		group.TargetSize = int(aws.ToInt32(sc.DesiredSize))
	}
	for _, asgName := range backingASGs(ng) {
		g, err := m.p.describeASG(ctx, op, asgName)
		if errclass.IsNotFound(err) {
			continue // still being created
		}
		if err != nil {
			return connectors.NodeGroup{}, err
		}
		instances, err := m.p.asgInstances(ctx, op, g)
		if err != nil {
			return connectors.NodeGroup{}, err
		}
		group.Instances = append(group.Instances, instances...)
	}
	if ng.Status == ekstypes.NodegroupStatusDeleting {
		markDeleting(&group)
	}
	return group, nil
}

func backingASGs(ng *ekstypes.Nodegroup) []string {
	if ng.Resources == nil {
		return nil
	}
	var names []string
	for _, g := range ng.Resources.AutoScalingGroups {
		names = append(names, aws.ToString(g.Name))
	}
	return names
}

// setTargetSize updates the node group's desired size (widening min/max if
// the target lies outside) with a request token from the key; an equal
// desired size sends nothing, so a retry after success is free.
func (m *eksMode) setTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = "SetTargetSize"
	ng, err := m.describe(ctx, op, groupID)
	if err != nil {
		return err
	}
	var desired, minSize, maxSize int32
	if sc := ng.ScalingConfig; sc != nil {
		desired, minSize, maxSize = aws.ToInt32(sc.DesiredSize), aws.ToInt32(sc.MinSize), aws.ToInt32(sc.MaxSize)
	}
	t := int32(target)
	if desired == t && ng.ScalingConfig != nil {
		return nil
	}
	_, err = m.p.eks.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{
		ClusterName:   m.cluster(),
		NodegroupName: aws.String(groupID),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{
			DesiredSize: aws.Int32(t),
			MinSize:     aws.Int32(min(minSize, t)),
			MaxSize:     aws.Int32(max(maxSize, t, 1)),
		},
		ClientRequestToken: aws.String(ClientToken(key, "eks-scale/"+groupID, target)),
	})
	return m.p.classify(op+": eks:UpdateNodegroupConfig", err)
}

func (m *eksMode) createNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, name string, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = "CreateNodeGroup"
	ng, err := m.describe(ctx, op, name)
	if err == nil {
		return m.owned(ctx, op, ng, spec.Pool)
	}
	if !errclass.IsNotFound(err) {
		return connectors.NodeGroup{}, err
	}
	if m.p.cfg.NodeRoleARN == "" || len(m.p.cfg.Subnets) == 0 {
		return connectors.NodeGroup{}, invalid(op, errors.New(`Config.NodeRoleARN and Config.Subnets are required to create groups in mode "eks"`))
	}
	labels := groupTags(withOfferingLabels(spec), spec.Pool.NodePoolLabel(), spec.Size)
	delete(labels, tagSize) // node.kubernetes.io/instance-type already says it
	_, err = m.p.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
		ClusterName:   m.cluster(),
		NodegroupName: aws.String(name),
		NodeRole:      aws.String(m.p.cfg.NodeRoleARN),
		Subnets:       m.p.cfg.Subnets,
		InstanceTypes: []string{spec.Size},
		CapacityType:  eksCapacityType(spec.CapacityType.Or()),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{
			MinSize:     aws.Int32(0),
			MaxSize:     aws.Int32(int32(max(spec.TargetSize, 1))),
			DesiredSize: aws.Int32(int32(spec.TargetSize)),
		},
		Labels:             labels,
		Tags:               map[string]string{tagPool: spec.Pool.NodePoolLabel()},
		ClientRequestToken: aws.String(ClientToken(key, "eks-create/"+name, 0)),
	})
	// ResourceInUseException here means the name exists: a previous attempt won.
	if err != nil && errorCode(err) != "ResourceInUseException" {
		return connectors.NodeGroup{}, m.p.classify(op+": eks:CreateNodegroup", err)
	}
	if ng, err = m.describe(ctx, op, name); err != nil {
		return connectors.NodeGroup{}, err
	}
	return m.owned(ctx, op, ng, spec.Pool)
}

func (m *eksMode) owned(ctx context.Context, op string, ng *ekstypes.Nodegroup, pool types.PoolKey) (connectors.NodeGroup, error) {
	if got := ng.Labels[tagPool]; got != pool.NodePoolLabel() {
		return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("node group %s exists with label %s=%q, not %q", aws.ToString(ng.NodegroupName), tagPool, got, pool.NodePoolLabel()))
	}
	return m.nodeGroup(ctx, op, ng)
}

// deleteNodeGroup deletes the managed node group; EKS drains nothing (the
// pool did) and terminates its instances. One without the pool label is
// refused: it is not Visor's.
func (m *eksMode) deleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = "DeleteNodeGroup"
	ng, err := m.describe(ctx, op, groupID)
	if err != nil {
		return err
	}
	if ng.Labels[tagPool] == "" {
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("node group %s has no %s label: Visor does not manage it", groupID, tagPool))
	}
	if ng.Status == ekstypes.NodegroupStatusDeleting {
		return nil
	}
	_, err = m.p.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: m.cluster(), NodegroupName: aws.String(groupID)})
	return m.p.classify(op+": eks:DeleteNodegroup", err)
}

// deleteNodes terminates the nodes in the node group's Auto Scaling group
// (a managed node group has exactly one) with decrement, as
// cluster-autoscaler does for managed node groups; EKS carries the lowered
// desired capacity back into the node group.
func (m *eksMode) deleteNodes(ctx context.Context, groupID string, nodeNames []string) error {
	const op = "DeleteNodes"
	ng, err := m.describe(ctx, op, groupID)
	if err != nil {
		return err
	}
	asgs := backingASGs(ng)
	if len(asgs) == 0 {
		return errclass.New(errclass.Retryable, ProviderName, op,
			fmt.Errorf("node group %s has no Auto Scaling group yet", groupID))
	}
	g, err := m.p.describeASG(ctx, op, asgs[0])
	if err != nil {
		return err
	}
	return m.p.terminateInASG(ctx, op, g, nodeNames, false)
}
