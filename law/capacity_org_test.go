package law

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

func TestStricterOrgLimitsTakesTheTighterOfEachField(t *testing.T) {
	policy := &types.OrgPolicy{Org: "acme", MaxNodes: 50, MaxHourlyCost: 20}
	platform := &types.OrgPolicy{Org: "acme", MaxNodes: 100, MaxNodesPerCluster: 10, MaxHourlyCost: 5}
	require.Equal(t, types.OrgPolicy{Org: "acme", MaxNodes: 50, MaxNodesPerCluster: 10, MaxHourlyCost: 5}, StricterOrgLimits(policy, platform))
	require.Equal(t, *platform, StricterOrgLimits(nil, platform))
	require.Equal(t, *policy, StricterOrgLimits(policy, nil))
	require.Equal(t, types.OrgPolicy{}, StricterOrgLimits(nil, nil))
}

func TestOrgRoomOnTakesTheTighterCeiling(t *testing.T) {
	acme := types.OrgPolicy{Org: "acme", MaxNodes: 20, MaxNodesPerCluster: 12}
	for _, tc := range []struct {
		name  string
		lim   types.OrgPolicy
		usage OrgUsage
		want  OrgRoom
	}{
		{"no limits", types.OrgPolicy{}, OrgUsage{Fabric: 99, Cluster: 99, HourlyCost: 9}, OrgRoom{Nodes: math.MaxInt}},
		{"cluster cap binds, room left: no note", acme, OrgUsage{Fabric: 12, Cluster: 10}, OrgRoom{Nodes: 2}},
		{"fabric cap binds, room left", acme, OrgUsage{Fabric: 19, Cluster: 5}, OrgRoom{Nodes: 1}},
		{"fabric cap full", acme, OrgUsage{Fabric: 20, Cluster: 5}, OrgRoom{Nodes: 0, Note: "org ceiling: org acme has 20 of its 20 nodes on the fabric"}},
		{"cluster cap full", acme, OrgUsage{Fabric: 13, Cluster: 12}, OrgRoom{Nodes: 0, Note: "org ceiling: org acme has 12 of its 12 nodes on cluster east"}},
		{"over both, the cluster's is tighter", acme, OrgUsage{Fabric: 21, Cluster: 15}, OrgRoom{Nodes: -3, Note: "org ceiling: org acme has 15 of its 12 nodes on cluster east"}},
		{"a tie keeps the fabric's", acme, OrgUsage{Fabric: 22, Cluster: 14}, OrgRoom{Nodes: -2, Note: "org ceiling: org acme has 22 of its 20 nodes on the fabric"}},
		{"cost budget only", types.OrgPolicy{MaxHourlyCost: 3}, OrgUsage{HourlyCost: 2}, OrgRoom{Nodes: math.MaxInt, CostCapped: true, CostRoom: 1}},
		{"cost budget overspent", types.OrgPolicy{MaxHourlyCost: 3}, OrgUsage{HourlyCost: 3.5}, OrgRoom{Nodes: math.MaxInt, CostCapped: true, CostRoom: -0.5}},
	} {
		got := OrgRoomOn(tc.lim, tc.usage, "acme", "east")
		assert.Equal(t, tc.want.Nodes, got.Nodes, tc.name)
		assert.Equal(t, tc.want.Note, got.Note, tc.name)
		assert.Equal(t, tc.want.CostCapped, got.CostCapped, tc.name)
		assert.InDelta(t, tc.want.CostRoom, got.CostRoom, 1e-12, tc.name)
	}
}
