package aws

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// Auto Scaling group helpers shared by the asg mode and the eks mode (an
// EKS managed node group is backed by an Auto Scaling group).

// describeASG returns the named group, or a NotFound error.
func (p *Provider) describeASG(ctx context.Context, op, name string) (asgtypes.AutoScalingGroup, error) {
	out, err := p.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{
		AutoScalingGroupNames: []string{name},
	})
	if err != nil {
		return asgtypes.AutoScalingGroup{}, p.classify(op+": autoscaling:DescribeAutoScalingGroups", err)
	}
	for _, g := range out.AutoScalingGroups {
		if aws.ToString(g.AutoScalingGroupName) == name {
			return g, nil
		}
	}
	return asgtypes.AutoScalingGroup{}, errclass.New(errclass.NotFound, ProviderName, op,
		fmt.Errorf("auto scaling group %q does not exist", name))
}

// asgInstances lists a group's members with their node names.
func (p *Provider) asgInstances(ctx context.Context, op string, g asgtypes.AutoScalingGroup) ([]connectors.Instance, error) {
	ids := make([]string, 0, len(g.Instances))
	for _, m := range g.Instances {
		ids = append(ids, aws.ToString(m.InstanceId))
	}
	byID, err := p.instancesByID(ctx, op, ids)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(g.Instances))
	for _, m := range g.Instances {
		id := aws.ToString(m.InstanceId)
		inst := connectors.Instance{ID: id, Name: id, State: lifecycleState(m.LifecycleState)}
		if i, ok := byID[id]; ok {
			inst.Name = nodeName(i)
			inst.CreatedAt = aws.ToTime(i.LaunchTime)
		}
		out = append(out, inst)
	}
	return out, nil
}

func lifecycleState(s asgtypes.LifecycleState) connectors.InstanceState {
	switch {
	case strings.HasPrefix(string(s), "Pending"):
		return connectors.InstanceCreating
	case isLeaving(s):
		return connectors.InstanceDeleting
	}
	return connectors.InstanceRunning
}

// isLeaving: the member is already on its way out of the group.
func isLeaving(s asgtypes.LifecycleState) bool {
	return strings.HasPrefix(string(s), "Terminat") || strings.HasPrefix(string(s), "Detach")
}

// terminateInASG terminates the named nodes' instances with
// ShouldDecrementDesiredCapacity, so the group shrinks instead of
// replacing them. Names with no instance, and instances already leaving,
// are skipped (a retry finds them so). An instance outside the group is a
// caller error. With lowerMin, a MinSize that would block the decrement is
// lowered first: the pool's floor is enforced by the workflow, not here.
func (p *Provider) terminateInASG(ctx context.Context, op string, g asgtypes.AutoScalingGroup, names []string, lowerMin bool) error {
	found, err := p.instancesByNodeName(ctx, op, names)
	if err != nil {
		return err
	}
	members := map[string]asgtypes.LifecycleState{}
	for _, m := range g.Instances {
		members[aws.ToString(m.InstanceId)] = m.LifecycleState
	}
	var doomed []string
	for _, name := range names {
		i, ok := found[name]
		if !ok || isGone(i) {
			continue
		}
		id := aws.ToString(i.InstanceId)
		state, member := members[id]
		if !member {
			return errclass.New(errclass.Permanent, ProviderName, op,
				fmt.Errorf("node %s (instance %s) is not in group %s", name, id, aws.ToString(g.AutoScalingGroupName)))
		}
		if !isLeaving(state) {
			doomed = append(doomed, id)
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	desired, minSize := aws.ToInt32(g.DesiredCapacity), aws.ToInt32(g.MinSize)
	if left := desired - int32(len(doomed)); lowerMin && left < minSize {
		_, err := p.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
			AutoScalingGroupName: g.AutoScalingGroupName,
			MinSize:              aws.Int32(max(left, 0)),
		})
		if err != nil {
			return p.classify(op+": autoscaling:UpdateAutoScalingGroup", err)
		}
	}
	for _, id := range doomed {
		_, err := p.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
			InstanceId:                     aws.String(id),
			ShouldDecrementDesiredCapacity: aws.Bool(true),
		})
		if err != nil {
			return p.classify(op+": autoscaling:TerminateInstanceInAutoScalingGroup "+id, err)
		}
	}
	return nil
}

func asgTagMap(tags []asgtypes.TagDescription) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}
