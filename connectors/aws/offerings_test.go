package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// A spot group pinned to a zone, in ec2 mode on moto: its instances are
// spot (InstanceLifecycle), in that zone, and the group reads back as spot
// in that zone; an on-demand group beside it stays on demand.
func TestEC2SpotGroupLaunchesSpotInItsZone(t *testing.T) {
	ctx := context.Background()
	p, _ := newEC2Provider(t)
	pool := testPool("ec2-spot")
	spot := connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large", TargetSize: 2, CapacityType: types.CapacitySpot, Zone: "us-east-1b"}
	key := connectors.IdempotencyKey(pool.WorkflowID() + "/decision/3/provision-0")
	g, err := p.CreateNodeGroup(ctx, spot, key)
	require.NoError(t, err)
	assert.Equal(t, types.CapacitySpot, g.CapacityType)
	assert.Equal(t, "us-east-1b", g.Zone)
	require.Len(t, g.Instances, 2)

	all, err := (&ec2Mode{p}).members(ctx, "test", g.ID)
	require.NoError(t, err)
	for _, i := range all {
		assert.Equal(t, ec2types.InstanceLifecycleTypeSpot, i.InstanceLifecycle, "instance %s", aws.ToString(i.InstanceId))
		assert.Equal(t, "us-east-1b", aws.ToString(i.Placement.AvailabilityZone))
	}
	// A retry with the same key launches nothing more.
	again, err := p.CreateNodeGroup(ctx, spot, key)
	require.NoError(t, err)
	assert.Equal(t, instanceIDs(g), instanceIDs(again))

	od := connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large", TargetSize: 1}
	odGroup, err := p.CreateNodeGroup(ctx, od, key+"-od")
	require.NoError(t, err)
	assert.Equal(t, types.CapacityOnDemand, odGroup.CapacityType)
	out, err := p.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{odGroup.Instances[0].ID}})
	require.NoError(t, err)
	assert.Empty(t, out.Reservations[0].Instances[0].InstanceLifecycle, "on-demand instances have no lifecycle")
}

// In asg mode a spot group is a MixedInstancesPolicy with no on-demand
// share, price-capacity-optimized, in the pinned zone.
func TestASGSpotGroupIsAllSpotInItsZone(t *testing.T) {
	ctx := context.Background()
	p := newTestProvider(t, Config{Mode: ModeASG})
	fx := newMotoFixture(t, p, "visor-base-asg-spot")
	p.cfg.LaunchTemplate, p.cfg.Subnets = fx.template, []string{fx.subnet}
	pool := testPool("asg-spot")
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "m6i.large", TargetSize: 1, CapacityType: types.CapacitySpot, Zone: "us-east-1a"}
	g, err := p.CreateNodeGroup(ctx, spec, connectors.IdempotencyKey(pool.WorkflowID()+"/decision/1"))
	require.NoError(t, err)
	assert.Equal(t, types.CapacitySpot, g.CapacityType)
	assert.Equal(t, "us-east-1a", g.Zone)
	out, err := p.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{g.ID}})
	require.NoError(t, err)
	asg := out.AutoScalingGroups[0]
	require.NotNil(t, asg.MixedInstancesPolicy.InstancesDistribution)
	d := asg.MixedInstancesPolicy.InstancesDistribution
	assert.Equal(t, int32(0), aws.ToInt32(d.OnDemandPercentageAboveBaseCapacity))
	assert.Equal(t, "price-capacity-optimized", aws.ToString(d.SpotAllocationStrategy))
	assert.Equal(t, []string{"us-east-1a"}, asg.AvailabilityZones)
}

func TestCatalogZonesFollowTheRegion(t *testing.T) {
	p := newTestProvider(t, Config{Mode: ModeEC2, Region: "eu-west-1"})
	c, err := p.Catalog(context.Background())
	require.NoError(t, err)
	for _, o := range c[0].Offerings {
		assert.Regexp(t, `^eu-west-1[a-f]$`, o.Zone)
	}
}
