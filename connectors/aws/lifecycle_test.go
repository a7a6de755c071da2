package aws

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// runTagged launches one instance outside any group, tagged as given: a
// launch whose record was lost, or a stranger.
func runTagged(t *testing.T, p *Provider, image string, tags map[string]string) string {
	t.Helper()
	in := &ec2.RunInstancesInput{ImageId: aws.String(image), MinCount: aws.Int32(1), MaxCount: aws.Int32(1)}
	if len(tags) > 0 {
		in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2Tags(tags)}}
	}
	out, err := p.ec2.RunInstances(context.Background(), in)
	require.NoError(t, err)
	return aws.ToString(out.Instances[0].InstanceId)
}

func leakedIDs(t *testing.T, p *Provider, pool types.PoolKey) []string {
	t.Helper()
	leaks, err := p.LeakedInstances(context.Background(), pool)
	require.NoError(t, err)
	var ids []string
	for _, l := range leaks {
		ids = append(ids, l.ID)
	}
	return ids
}

func assertCreatedAt(t *testing.T, g connectors.NodeGroup) {
	t.Helper()
	require.NotEmpty(t, g.Instances)
	for _, i := range g.Instances {
		assert.False(t, i.CreatedAt.IsZero(), "instance %s has its launch time", i.ID)
		assert.WithinDuration(t, time.Now(), i.CreatedAt, time.Hour)
	}
}

func TestEC2LeaksAreFoundCollectedAndGroupDeletionLeavesNothing(t *testing.T) {
	ctx := context.Background()
	p, fx := newEC2Provider(t)
	pool := testPool("ec2-gc")
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "c6i.large", TargetSize: 2}
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")
	g, err := p.CreateNodeGroup(ctx, spec, key)
	require.NoError(t, err)
	assertCreatedAt(t, g)

	// A launch tagged for the pool whose group tag names no template (the
	// crash came before the group was recorded), and strangers.
	leak := runTagged(t, p, fx.image, map[string]string{tagPool: pool.NodePoolLabel(), tagGroup: "gone-template"})
	runTagged(t, p, fx.image, map[string]string{tagPool: testPool("someone-else").NodePoolLabel()})
	runTagged(t, p, fx.image, nil)
	assert.Equal(t, []string{leak}, leakedIDs(t, p, pool), "group members are not leaks")

	err = p.DeleteInstances(ctx, pool, []string{leak, g.Instances[0].ID}, key+"/gc")
	assert.True(t, errclass.IsPermanent(err), "a member is refused: %v", err)
	assert.Equal(t, []string{leak}, leakedIDs(t, p, pool), "and nothing was terminated")
	require.NoError(t, p.DeleteInstances(ctx, pool, []string{leak}, key+"/gc"))
	assert.Empty(t, leakedIDs(t, p, pool))
	require.NoError(t, p.DeleteInstances(ctx, pool, []string{leak}, key+"/gc"), "a retry is success")

	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, key+"/release"))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	assert.Empty(t, groups, "the template is gone, so is the group")
	members, err := (&ec2Mode{p}).members(ctx, "test", g.ID)
	require.NoError(t, err)
	require.Len(t, members, 2)
	for _, i := range members {
		assert.True(t, isGone(i), "member %s terminated", aws.ToString(i.InstanceId))
	}
	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, key+"/release"), "a group already gone is success")
	assert.Empty(t, leakedIDs(t, p, pool), "terminated members are not leaks either")
}

func TestASGLeakOutsideTheGroupAndForceDelete(t *testing.T) {
	ctx := context.Background()
	p := newTestProvider(t, Config{Mode: ModeASG})
	fx := newMotoFixture(t, p, "visor-base-asg-gc")
	p.cfg.LaunchTemplate, p.cfg.Subnets = fx.template, []string{fx.subnet}
	pool := testPool("asg-gc")
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large", TargetSize: 2}, key)
	require.NoError(t, err)
	assertCreatedAt(t, g)

	leak := runTagged(t, p, fx.image, map[string]string{tagPool: pool.NodePoolLabel()})
	assert.Equal(t, []string{leak}, leakedIDs(t, p, pool), "tagged for the pool, outside its ASG")
	require.NoError(t, p.DeleteInstances(ctx, pool, []string{leak}, key+"/gc"))
	assert.Empty(t, leakedIDs(t, p, pool))

	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, key+"/release"))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	for _, left := range groups {
		assert.Zero(t, left.TargetSize, "a group still listed is being deleted")
		for _, i := range left.Instances {
			assert.Equal(t, connectors.InstanceDeleting, i.State)
		}
	}
	_, err = p.describeASG(ctx, "test", g.ID)
	assert.True(t, errclass.IsNotFound(err), "moto deletes a force-deleted group at once: %v", err)
	var ids []string
	for _, i := range g.Instances {
		ids = append(ids, i.ID)
	}
	after, err := p.instancesByID(ctx, "test", ids)
	require.NoError(t, err)
	for _, id := range ids {
		assert.True(t, isGone(after[id]), "ForceDelete terminated %s", id)
	}
	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, key+"/release"), "a group already gone is success")
	assert.True(t, errclass.IsPermanent(connectors.Checked(p).DeleteNodeGroup(ctx, "", key)))
}

func TestEKSDeleteNodeGroupDeletesOnlyThePoolsNodegroup(t *testing.T) {
	ctx := context.Background()
	p, _ := newEKSProvider(t, "visor-eks-del")
	pool := testPool("eks-del")
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "m6i.xlarge", TargetSize: 2}, key)
	require.NoError(t, err)

	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, key+"/release"))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	for _, left := range groups {
		assert.Zero(t, left.TargetSize, "a node group still listed is DELETING")
	}
	require.NoError(t, p.DeleteNodeGroup(ctx, g.ID, key+"/release"), "a node group already gone is success")

	err = p.DeleteNodeGroup(ctx, "system", key+"/other")
	assert.True(t, errclass.IsPermanent(err), "a node group without the pool label is not Visor's: %v", err)
	_, err = p.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("visor-eks-del"), NodegroupName: aws.String("system")})
	assert.NoError(t, err, "and it survives")
}
