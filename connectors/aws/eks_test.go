package aws

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// moto implements EKS node groups as records (create, list, describe,
// update config) and names a backing Auto Scaling group it never creates;
// the test creates that group itself, playing EKS's part.
// newEKSProvider is an eks-mode provider on a fresh moto EKS cluster that
// already has someone else's node group, "system" (no pool label).
func newEKSProvider(t *testing.T, cluster string) (*Provider, motoFixture) {
	t.Helper()
	ctx := context.Background()
	p := newTestProvider(t, Config{Mode: ModeEKS, ClusterName: cluster})
	fx := newMotoFixture(t, p, "visor-base-"+cluster)
	p.cfg.NodeRoleARN = "arn:aws:iam::123456789012:role/visor-nodes"
	p.cfg.Subnets = []string{fx.subnet}
	_, err := p.eks.CreateCluster(ctx, &eks.CreateClusterInput{
		Name:               aws.String(cluster),
		RoleArn:            aws.String("arn:aws:iam::123456789012:role/visor-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{fx.subnet}},
	})
	require.NoError(t, err)
	_, err = p.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String("system"),
		NodeRole: aws.String(p.cfg.NodeRoleARN), Subnets: []string{fx.subnet},
	})
	require.NoError(t, err)
	return p, fx
}

func TestEKSEndToEnd(t *testing.T) {
	ctx := context.Background()
	p, fx := newEKSProvider(t, "visor-eks")

	sent := recordEKSInputs(p)
	pool := testPool("eks-e2e")
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "m6i.xlarge", TargetSize: 2}
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/3")
	created, err := p.CreateNodeGroup(ctx, spec, key)
	require.NoError(t, err)
	assert.Equal(t, GroupName(spec, key), created.ID)
	assert.Equal(t, "m6i.xlarge", created.Size)
	assert.Equal(t, 2, created.TargetSize)
	assert.Equal(t, pool.NodePoolLabel(), created.Labels[tagPool])
	create := sent.last("CreateNodegroup").(*eks.CreateNodegroupInput)
	assert.Equal(t, ClientToken(key, "eks-create/"+created.ID, 0), aws.ToString(create.ClientRequestToken))
	assert.Equal(t, pool.NodePoolLabel(), create.Labels[tagPool])

	again, err := p.CreateNodeGroup(ctx, spec, key)
	require.NoError(t, err)
	assert.Equal(t, created.ID, again.ID)
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1, "only the pool's node group is listed")

	require.NoError(t, p.SetTargetSize(ctx, created.ID, 5, key+"/scale"))
	update := sent.last("UpdateNodegroupConfig").(*eks.UpdateNodegroupConfigInput)
	assert.Equal(t, ClientToken(key+"/scale", "eks-scale/"+created.ID, 5), aws.ToString(update.ClientRequestToken))
	require.NoError(t, p.SetTargetSize(ctx, created.ID, 5, key+"/scale"))
	assert.Equal(t, 1, sent.count("UpdateNodegroupConfig"), "an equal desired size sends nothing")
	raw, err := p.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("visor-eks"), NodegroupName: aws.String(created.ID)})
	require.NoError(t, err)
	assert.EqualValues(t, 5, aws.ToInt32(raw.Nodegroup.ScalingConfig.DesiredSize))
	assert.EqualValues(t, 5, aws.ToInt32(raw.Nodegroup.ScalingConfig.MaxSize), "max raised to fit")
	assert.Equal(t, 5, findGroup(t, p, pool, created.ID).TargetSize)

	// Play EKS: create the node group's Auto Scaling group with two nodes.
	asgName := backingASGs(raw.Nodegroup)[0]
	_, err = p.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(asgName),
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(5), DesiredCapacity: aws.Int32(2),
		LaunchTemplate:    &asgtypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(fx.template)},
		VPCZoneIdentifier: aws.String(fx.subnet),
	})
	require.NoError(t, err)
	g := findGroup(t, p, pool, created.ID)
	require.Len(t, g.Instances, 2, "instances come from the backing Auto Scaling group")

	victim := g.Instances[1]
	require.NoError(t, p.DeleteNodes(ctx, created.ID, []string{victim.Name}, key+"/delete"))
	require.NoError(t, p.DeleteNodes(ctx, created.ID, []string{victim.Name}, key+"/delete"), "retry")
	backing, err := p.describeASG(ctx, "test", asgName)
	require.NoError(t, err)
	assert.EqualValues(t, 1, aws.ToInt32(backing.DesiredCapacity), "terminated with decrement")
	assert.Len(t, backing.Instances, 1)
	assert.False(t, instanceIDs(findGroup(t, p, pool, created.ID))[victim.ID])

	err = p.SetTargetSize(ctx, "no-such-nodegroup", 1, key)
	assert.True(t, errclass.IsNotFound(err), "got %v", err)
}

func TestEKSCreateNeedsRoleAndSubnets(t *testing.T) {
	p := newTestProvider(t, Config{Mode: ModeEKS, ClusterName: "visor-eks-bare"})
	_, err := p.eks.CreateCluster(context.Background(), &eks.CreateClusterInput{
		Name: aws.String("visor-eks-bare"), RoleArn: aws.String("arn:aws:iam::123456789012:role/c"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-1"}},
	})
	require.NoError(t, err)
	_, err = p.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: testPool("eks-bare"), Size: "m6i.large"}, "k")
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.Contains(t, err.Error(), "NodeRoleARN")
}

// sentInputs records the parameters of every EKS call, to check the
// request tokens moto does not echo back.
type sentInputs struct {
	mu     sync.Mutex
	byName map[string][]any
}

func recordEKSInputs(p *Provider) *sentInputs {
	s := &sentInputs{byName: map[string][]any{}}
	p.eks = eks.New(p.eks.Options(), func(o *eks.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("visor-record",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					s.mu.Lock()
					op := middleware.GetOperationName(ctx)
					s.byName[op] = append(s.byName[op], in.Parameters)
					s.mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	})
	return s
}

func (s *sentInputs) last(op string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := s.byName[op]
	if len(calls) == 0 {
		return nil
	}
	return calls[len(calls)-1]
}

func (s *sentInputs) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byName[op])
}
