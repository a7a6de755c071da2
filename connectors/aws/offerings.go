package aws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// A group's offering is kept where its labels are: the pool puts
// karpenter.sh/capacity-type on a spot group's labels and the zone label
// on a pinned one, and every mode tags (or labels) the group with them, so
// a read reports what the group buys with no extra bookkeeping.

// offeringFromLabels is the capacity type and zone a group's labels name.
func offeringFromLabels(labels map[string]string) (types.CapacityType, string) {
	ct := types.CapacityOnDemand
	if labels[types.CapacityTypeLabel] == string(types.CapacitySpot) {
		ct = types.CapacitySpot
	}
	return ct, labels[corev1.LabelTopologyZone]
}

// withOfferingLabels is spec.Labels plus the offering's, so a group made
// by a caller that set only CapacityType and Zone still reads back as such.
func withOfferingLabels(spec connectors.NodeGroupSpec) map[string]string {
	out := make(map[string]string, len(spec.Labels)+2)
	for k, v := range spec.Labels {
		out[k] = v
	}
	if spec.CapacityType.Or() == types.CapacitySpot {
		out[types.CapacityTypeLabel] = string(types.CapacitySpot)
	}
	if spec.Zone != "" {
		out[corev1.LabelTopologyZone] = spec.Zone
	}
	return out
}

// setOffering fills a group's CapacityType and Zone from its labels.
func setOffering(g *connectors.NodeGroup) {
	g.CapacityType, g.Zone = offeringFromLabels(g.Labels)
}

// ec2Market is RunInstances' InstanceMarketOptions for a spot group (nil
// on demand): a one-time request that terminates on interruption, as EC2
// documents for instances a fleet replaces itself. No MaxPrice: the spot
// price, capped at on-demand.
func ec2Market(ct types.CapacityType) *ec2types.InstanceMarketOptionsRequest {
	if ct != types.CapacitySpot {
		return nil
	}
	return &ec2types.InstanceMarketOptionsRequest{
		MarketType: ec2types.MarketTypeSpot,
		SpotOptions: &ec2types.SpotMarketOptions{
			SpotInstanceType:             ec2types.SpotInstanceTypeOneTime,
			InstanceInterruptionBehavior: ec2types.InstanceInterruptionBehaviorTerminate,
		},
	}
}

// asgDistribution is a MixedInstancesPolicy's InstancesDistribution: all
// spot, price-capacity-optimized (AWS's recommended allocation strategy),
// or nil on demand.
func asgDistribution(ct types.CapacityType) *asgtypes.InstancesDistribution {
	if ct != types.CapacitySpot {
		return nil
	}
	return &asgtypes.InstancesDistribution{
		OnDemandBaseCapacity:                aws.Int32(0),
		OnDemandPercentageAboveBaseCapacity: aws.Int32(0),
		SpotAllocationStrategy:              aws.String("price-capacity-optimized"),
	}
}

// eksCapacityType is the managed node group's capacityType.
func eksCapacityType(ct types.CapacityType) ekstypes.CapacityTypes {
	if ct == types.CapacitySpot {
		return ekstypes.CapacityTypesSpot
	}
	return ekstypes.CapacityTypesOnDemand
}
