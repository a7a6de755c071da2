package law

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hanzoai/visor-fleet/types"
)

func TestOrgRoomOnTakesTheTighterCeiling(t *testing.T) {
	acme := types.OrgPolicy{Org: "acme", MaxNodes: 20, MaxNodesPerCluster: 12, MaxHourlyCost: 3}
	for _, tc := range []struct {
		name   string
		usage  OrgUsage
		nodes  int
		reason string
	}{
		{"cluster cap binds", OrgUsage{NodesByCluster: map[string]int{"east": 10, "west": 2}}, 2, "org acme has 10 of its 12 nodes per cluster on east"},
		{"fabric cap binds", OrgUsage{NodesByCluster: map[string]int{"east": 5, "west": 14}}, 1, "org acme has 19 of its 20 nodes on the fabric"},
		{"over both: none", OrgUsage{NodesByCluster: map[string]int{"east": 13, "west": 9}}, 0, "org acme has 13 of its 12 nodes per cluster on east"}, // a tie keeps the cluster cap
		{"new cluster", OrgUsage{NodesByCluster: map[string]int{"west": 2}}, 12, "org acme has 0 of its 12 nodes per cluster on east"},
	} {
		room := OrgRoomOn(acme, tc.usage, "east")
		assert.True(t, room.NodesCapped, tc.name)
		assert.Equal(t, tc.nodes, room.Nodes, tc.name)
		assert.Equal(t, tc.reason, room.Reason, tc.name)
	}
	spent := OrgRoomOn(acme, OrgUsage{HourlyCost: 3.2}, "east")
	assert.Zero(t, spent.Cost.Room)
	assert.Equal(t, "org acme spends $3.2000/h of its $3.0000/h budget", spent.Reason)
	assert.InDelta(t, 1.0, OrgRoomOn(acme, OrgUsage{HourlyCost: 2}, "east").Cost.Room, 1e-12)

	free := OrgRoomOn(types.OrgPolicy{Org: "globex", MaxHourlyCost: 1}, OrgUsage{}, "east")
	assert.False(t, free.NodesCapped)
	assert.InDelta(t, 1.0, free.Cost.Room, 1e-12)
}

// Two pools of one org asking for more than the org's room together never
// get more than the room.
func TestShareNodesNeverOvershootsTheRoom(t *testing.T) {
	for _, tc := range []struct {
		room int
		asks map[string]int
		want map[string]int
	}{
		{5, map[string]int{"a": 4, "b": 4}, map[string]int{"a": 3, "b": 2}},
		{5, map[string]int{"a": 1, "b": 10}, map[string]int{"a": 1, "b": 4}},
		{10, map[string]int{"a": 3, "b": 4}, map[string]int{"a": 3, "b": 4}},
		{0, map[string]int{"a": 3}, map[string]int{}},
		{-2, map[string]int{"a": 3}, map[string]int{}},
		{7, map[string]int{"a": 2, "b": 5, "c": 5}, map[string]int{"a": 2, "b": 3, "c": 2}},
	} {
		got := ShareNodes(tc.room, tc.asks)
		sum := 0
		for id, n := range got {
			sum += n
			assert.LessOrEqual(t, n, tc.asks[id])
		}
		assert.LessOrEqual(t, sum, max(tc.room, 0))
		for id, n := range tc.want {
			assert.Equal(t, n, got[id], "room %d asks %v: %s", tc.room, tc.asks, id)
		}
	}
}
