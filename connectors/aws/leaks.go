package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// markDeleting shows a group the provider is deleting: no target, every
// instance on its way out.
func markDeleting(g *connectors.NodeGroup) {
	g.TargetSize = 0
	for i := range g.Instances {
		g.Instances[i].State = connectors.InstanceDeleting
	}
}

// LeakedInstances implements connectors.LeakFinder in every mode: live EC2
// instances tagged hanzo.ai/pool for the pool that no group of the pool
// lists as a member. In asg and ec2 mode every member carries that tag (an
// ASG propagates it at launch; ec2 mode tags each launch), so an instance
// launched for a group whose record was lost shows here. An EKS managed
// node group's instances do not carry it (EKS keeps nodegroup tags off the
// instances), so in eks mode only pool-tagged instances launched outside
// EKS are found.
func (p *Provider) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	const op = "LeakedInstances"
	leaked, _, err := p.leaked(ctx, op, pool)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.Instance, 0, len(leaked))
	for _, i := range leaked {
		out = append(out, instanceOf(i))
	}
	return out, nil
}

// DeleteInstances terminates leaked instances by ID. An ID that is a
// member of one of the pool's groups is refused before anything is
// terminated; an ID not (or no longer) leaked is success.
func (p *Provider) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, key connectors.IdempotencyKey) error {
	const op = "DeleteInstances"
	leaked, members, err := p.leaked(ctx, op, pool)
	if err != nil {
		return err
	}
	byID := map[string]bool{}
	for _, i := range leaked {
		byID[aws.ToString(i.InstanceId)] = true
	}
	var doomed []string
	for _, id := range ids {
		if g, ok := members[id]; ok {
			return errclass.New(errclass.Permanent, ProviderName, op,
				fmt.Errorf("instance %s belongs to group %s: it is not a leak", id, g))
		}
		if byID[id] {
			doomed = append(doomed, id)
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	_, err = p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: doomed})
	return p.classify(op+": ec2:TerminateInstances", err)
}

// leaked returns the pool-tagged live instances outside every group, and
// the group of each member instance.
func (p *Provider) leaked(ctx context.Context, op string, pool types.PoolKey) ([]ec2types.Instance, map[string]string, error) {
	groups, err := p.mode.nodeGroups(ctx, pool)
	if err != nil {
		return nil, nil, err
	}
	members := map[string]string{}
	for _, g := range groups {
		for _, inst := range g.Instances {
			members[inst.ID] = g.ID
		}
	}
	tagged, err := p.describeInstances(ctx, op, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("tag:" + tagPool), Values: []string{pool.NodePoolLabel()}},
			{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}},
		},
	})
	if err != nil {
		return nil, nil, err
	}
	var out []ec2types.Instance
	for _, i := range tagged {
		if _, ok := members[aws.ToString(i.InstanceId)]; !ok {
			out = append(out, i)
		}
	}
	return out, members, nil
}
