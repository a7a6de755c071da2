package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestASGEndToEnd(t *testing.T) {
	ctx := context.Background()
	p := newTestProvider(t, Config{Mode: ModeASG})
	fx := newMotoFixture(t, p, "visor-base-asg")
	p.cfg.LaunchTemplate, p.cfg.Subnets = fx.template, []string{fx.subnet}
	pool := testPool("asg-e2e")
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large", TargetSize: 2, Labels: map[string]string{"team": "payments"}}
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/1")

	created := createGroup(t, p, spec, key)
	assert.Equal(t, pool.NodePoolLabel(), created.Labels[tagPool])

	// moto replaces a group on a second CreateAutoScalingGroup (launching
	// new instances); our lookup-first path must never get there.
	again, err := p.CreateNodeGroup(ctx, spec, key)
	require.NoError(t, err)
	assert.Equal(t, created.ID, again.ID)
	assert.Equal(t, instanceIDs(created), instanceIDs(again), "a repeated create must not touch the group")
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)

	require.NoError(t, p.SetTargetSize(ctx, created.ID, 4, key+"/scale"))
	g := findGroup(t, p, pool, created.ID)
	assert.Equal(t, 4, g.TargetSize)
	assert.Len(t, g.Instances, 4)
	raw, err := p.describeASG(ctx, "test", created.ID)
	require.NoError(t, err)
	assert.EqualValues(t, 4, aws.ToInt32(raw.MaxSize), "max raised to fit the target")
	require.NoError(t, p.SetTargetSize(ctx, created.ID, 4, key+"/scale"), "same target twice is a no-op")

	// Terminate one named node with decrement; a MinSize in the way is lowered.
	_, err = p.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(created.ID), MinSize: aws.Int32(4),
	})
	require.NoError(t, err)
	victim := g.Instances[0]
	require.NotEqual(t, victim.ID, victim.Name, "node name should be the private DNS name")
	require.NoError(t, p.DeleteNodes(ctx, created.ID, []string{victim.Name}, key+"/delete"))
	g = findGroup(t, p, pool, created.ID)
	assert.Equal(t, 3, g.TargetSize, "desired lowered, not replaced")
	assert.Len(t, g.Instances, 3)
	assert.False(t, instanceIDs(g)[victim.ID])
	raw, err = p.describeASG(ctx, "test", created.ID)
	require.NoError(t, err)
	assert.EqualValues(t, 3, aws.ToInt32(raw.MinSize))
	gone, err := p.instancesByID(ctx, "test", []string{victim.ID})
	require.NoError(t, err)
	assert.True(t, isGone(gone[victim.ID]), "victim instance is terminated")

	// Retried delete, and a node that never existed: both succeed, nothing changes.
	require.NoError(t, p.DeleteNodes(ctx, created.ID, []string{victim.Name, "ip-10-255-255-254.ec2.internal"}, key+"/delete"))
	assert.Equal(t, 3, findGroup(t, p, pool, created.ID).TargetSize)

	// A live instance that is not in the group is refused, and survives.
	outsider, err := p.ec2.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(fx.image), MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	require.NoError(t, err)
	outsiderName := nodeName(outsider.Instances[0])
	err = p.DeleteNodes(ctx, created.ID, []string{outsiderName}, key+"/delete-2")
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.Contains(t, err.Error(), outsiderName)

	// Scale down by target.
	require.NoError(t, p.SetTargetSize(ctx, created.ID, 1, key+"/scale-2"))
	assert.Equal(t, 1, findGroup(t, p, pool, created.ID).TargetSize)

	other, err := p.NodeGroups(ctx, testPool("someone-else"))
	require.NoError(t, err)
	assert.Empty(t, other)
	err = p.SetTargetSize(ctx, "no-such-group", 1, key)
	assert.True(t, errclass.IsNotFound(err), "got %v", err)
}

func TestASGCreateRefusesAnotherPoolsGroup(t *testing.T) {
	ctx := context.Background()
	p := newTestProvider(t, Config{Mode: ModeASG})
	fx := newMotoFixture(t, p, "visor-base-asg")
	p.cfg.LaunchTemplate, p.cfg.Subnets = fx.template, []string{fx.subnet}
	spec := connectors.NodeGroupSpec{Pool: testPool("asg-owner"), Name: "shared", Size: "m6i.large", TargetSize: 0}
	key := connectors.IdempotencyKey("k-owner")
	_, err := p.CreateNodeGroup(ctx, spec, key)
	require.NoError(t, err)
	spec.Pool = testPool("asg-intruder")
	_, err = p.CreateNodeGroup(ctx, spec, key)
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
}

func TestASGCreateNeedsLaunchTemplate(t *testing.T) {
	p := newTestProvider(t, Config{Mode: ModeASG})
	_, err := p.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: testPool("asg-no-lt"), Size: "m6i.large"}, "k")
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.Contains(t, err.Error(), "LaunchTemplate")
}
