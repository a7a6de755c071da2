package activities_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// The planner on a sim selling spot at 30%: spot first buys spot anywhere
// (every zone one price); a zone list pins the group; a zone nobody sells
// in is the policy's mistake; maxSpotShare turns a spot buy to on demand.
func TestPlanBuysTheCheapestAllowedOffering(t *testing.T) {
	a, pool := simPlanner(t, catalogs.SimSpot())
	pods := []types.PendingPod{{Namespace: "web", Name: "p1", Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}}}
	spotFirst := []types.CapacityType{types.CapacitySpot, types.CapacityOnDemand}
	in := activities.PlanInput{Key: pool, Pods: pods, MaxNewNodes: 5, Offerings: activities.PlanOfferings{On: true, CapacityTypes: spotFirst}}
	ctx := context.Background()

	plan, err := a.PlanScaleUp(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, "sim-2c4g", plan.Size)
	assert.Equal(t, types.CapacitySpot, plan.CapacityType)
	assert.Empty(t, plan.Zone, "every zone costs the same: the provider places it")
	assert.InDelta(t, 0.006, plan.HourlyCost, 1e-9)
	assert.Contains(t, plan.Offering, "spot sim-2c4g at $0.0060/h (cheapest allowed offering)")

	in.Offerings.Zones = []string{"sim-b", "sim-c"}
	plan, err = a.PlanScaleUp(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, "sim-b", plan.Zone, "the cheapest allowed zone, by name among equals")
	assert.Contains(t, plan.Offering, "spot sim-2c4g in sim-b")

	in.Offerings.Zones = []string{"sim-z"}
	_, err = a.PlanScaleUp(ctx, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `policy.zones[0]: zone "sim-z" is not offered by any allowed size`)

	in.Offerings.Zones = nil
	in.Offerings.MaxSpotShare = 0.5
	in.Machines = map[string]int{"sim-2c4g//spot": 2, "sim-2c4g": 1}
	plan, err = a.PlanScaleUp(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, types.CapacityType(""), plan.CapacityType, "on demand anywhere: the default group")
	assert.True(t, strings.Contains(plan.Offering, "maxSpotShare 50%: 3 of 4 nodes would be spot"), plan.Offering)
	// The pool's spend prices its spot machines at the spot price.
	assert.InDelta(t, 0.006, plan.SizePrice["sim-2c4g//spot"], 1e-9)

	// Spot only on a catalog without spot: nothing to buy, the policy's mistake.
	plain, err := sim.New(sim.Config{Cluster: "dev", Seed: 3})
	require.NoError(t, err)
	b := &activities.Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: plain}}}
	in = activities.PlanInput{Key: pool, Pods: pods, MaxNewNodes: 5, Offerings: activities.PlanOfferings{On: true, CapacityTypes: []types.CapacityType{types.CapacitySpot}}}
	_, err = b.PlanScaleUp(ctx, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no spot offering")
}

// A size every zone sells at one price is bought without a zone (the
// provider places it) unless a pod of the plan is pinned to a zone: by a
// nodeSelector, a required node affinity, or a zone spread the running
// pods leave only one zone for. Then the group is pinned to that zone.
func TestPlanPinsTheZoneAPodIsPinnedTo(t *testing.T) {
	a, pool := simPlanner(t, catalogs.SimSpot())
	pod := func(s *types.PodScheduling) types.PendingPod {
		return types.PendingPod{Namespace: "web", Name: "p1", Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}, Scheduling: s}
	}
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}}}}
	for name, tc := range map[string]struct {
		pod  types.PendingPod
		zone string
	}{
		"unpinned":      {pod(nil), ""},
		"node selector": {pod(&types.PodScheduling{NodeSelector: map[string]string{corev1.LabelTopologyZone: "sim-c"}}), "sim-c"},
		"node affinity": {pod(&types.PodScheduling{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"sim-b"}}}}}}}), "sim-b"},
		"zone spread": {pod(&types.PodScheduling{Labels: map[string]string{"app": "s"}, TopologySpread: spread,
			ZoneSpreadPods: []map[string]int32{{"sim-a": 1, "sim-c": 1}}}), "sim-b"},
	} {
		t.Run(name, func(t *testing.T) {
			in := activities.PlanInput{Key: pool, Pods: []types.PendingPod{tc.pod}, MaxNewNodes: 5, Offerings: activities.PlanOfferings{On: true}}
			plan, err := a.PlanScaleUp(context.Background(), in)
			require.NoError(t, err)
			require.Equal(t, 1, plan.NewNodes, "%+v", plan)
			assert.Equal(t, tc.zone, plan.Zone)
		})
	}
	// Three spread pods beside one running pod in each zone: any zone
	// admits the first, none is singled out, and the provider's balancing
	// spreads the nodes (one zone pinned would hold them all only by the
	// planner's first-pod view of the spread).
	var three []types.PendingPod
	for _, name := range []string{"s1", "s2", "s3"} {
		p := pod(&types.PodScheduling{Labels: map[string]string{"app": "s"}, TopologySpread: spread,
			ZoneSpreadPods: []map[string]int32{{"sim-a": 1, "sim-b": 1, "sim-c": 1}}})
		p.Name, p.Requests.MilliCPU = name, 1500
		three = append(three, p)
	}
	plan, err := a.PlanScaleUp(context.Background(), activities.PlanInput{Key: pool, Pods: three, MaxNewNodes: 5, Offerings: activities.PlanOfferings{On: true}})
	require.NoError(t, err)
	assert.Empty(t, plan.Zone, "%+v", plan)
}
