package law

import (
	"fmt"
	"math"

	"github.com/hanzoai/visor-fleet/types"
)

// OrgUsage is what one org's pools hold, as their published memos add up
// (one visibility listing, never a query to each pool).
type OrgUsage struct {
	// Fabric counts the org's nodes on every cluster, Cluster those on
	// the pool's own cluster.
	Fabric  int
	Cluster int
	// HourlyCost is what the org's pools cost per hour on the whole fabric.
	HourlyCost float64
}

// OrgRoom is what an org's ceilings leave one of its pools.
type OrgRoom struct {
	// Nodes is how many more nodes the node ceilings leave (math.MaxInt:
	// none set); Note names the ceiling that leaves none, with the numbers.
	Nodes int
	Note  string
	// CostCapped: the org has a cost budget, which leaves CostRoom per
	// hour (negative when the org is over it). The plan checks it, since
	// it knows prices.
	CostCapped bool
	CostRoom   float64
}

// StricterOrgLimits is, field by field, the tighter of the pool policy's
// org limits and the platform's (0 is no limit; nil sets none): a spec
// may tighten the platform's limits, never loosen them.
func StricterOrgLimits(policy, platform *types.OrgPolicy) types.OrgPolicy {
	var out types.OrgPolicy
	tighter := func(a, b int) int {
		if a == 0 || (b > 0 && b < a) {
			return b
		}
		return a
	}
	for _, l := range []*types.OrgPolicy{policy, platform} {
		if l == nil {
			continue
		}
		out.Org = l.Org
		out.MaxNodes = tighter(out.MaxNodes, l.MaxNodes)
		out.MaxNodesPerCluster = tighter(out.MaxNodesPerCluster, l.MaxNodesPerCluster)
		if out.MaxHourlyCost == 0 || (l.MaxHourlyCost > 0 && l.MaxHourlyCost < out.MaxHourlyCost) {
			out.MaxHourlyCost = l.MaxHourlyCost
		}
	}
	return out
}

// OrgRoomOn is the room org's limits lim leave a pool on cluster, given
// the org's usage: the smaller of maxNodes less its nodes on the fabric
// and maxNodesPerCluster less its nodes there (the fabric's on a tie),
// and its cost budget less its spend. Pools that scale at the same moment
// can each take the last room: the ceiling holds to within one decision
// per pool, and no pool grows past it after that.
func OrgRoomOn(lim types.OrgPolicy, u OrgUsage, org, cluster string) OrgRoom {
	room := OrgRoom{Nodes: math.MaxInt}
	if lim.MaxHourlyCost > 0 {
		room.CostCapped, room.CostRoom = true, lim.MaxHourlyCost-u.HourlyCost
	}
	if lim.MaxNodes > 0 {
		if r := lim.MaxNodes - u.Fabric; r < room.Nodes {
			room.Nodes, room.Note = r, fmt.Sprintf("org ceiling: org %s has %d of its %d nodes on the fabric", org, u.Fabric, lim.MaxNodes)
		}
	}
	if lim.MaxNodesPerCluster > 0 {
		if r := lim.MaxNodesPerCluster - u.Cluster; r < room.Nodes {
			room.Nodes, room.Note = r, fmt.Sprintf("org ceiling: org %s has %d of its %d nodes on cluster %s", org, u.Cluster, lim.MaxNodesPerCluster, cluster)
		}
	}
	if room.Nodes > 0 {
		room.Note = ""
	}
	return room
}
