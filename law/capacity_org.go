package law

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// OrgUsage is what one org's pools hold across the fabric, as the
// cluster (or org) workflow adds it up from its pools' reports.
type OrgUsage struct {
	// NodesByCluster counts the org's nodes (booting included) per cluster.
	NodesByCluster map[string]int `json:"nodesByCluster,omitempty"`
	// HourlyCost is what they cost per hour.
	HourlyCost float64 `json:"hourlyCost,omitempty"`
}

// Nodes is the org's total across clusters.
func (u OrgUsage) Nodes() int {
	n := 0
	for _, v := range u.NodesByCluster {
		n += v
	}
	return n
}

// OrgRoom is what an org's ceilings leave for more capacity on one cluster.
type OrgRoom struct {
	// NodesCapped: a node ceiling applies and Nodes more may be added.
	NodesCapped bool `json:"nodesCapped,omitempty"`
	Nodes       int  `json:"nodes,omitempty"`
	// Cost is the org's budget checked with nothing more bought: its Room
	// is what more the org may spend per hour.
	Cost BudgetVerdict `json:"cost"`
	// Reason names the ceiling that binds, with the numbers.
	Reason string `json:"reason,omitempty"`
}

// OrgRoomOn is the room an org's limits leave on cluster, given its
// usage: the smaller of maxNodesPerCluster less its nodes there and
// maxNodes less its nodes everywhere, never negative, and its hourly
// budget less its spend.
func OrgRoomOn(org types.OrgPolicy, usage OrgUsage, cluster string) OrgRoom {
	room := OrgRoom{Cost: WithinBudget(0, org.MaxHourlyCost, usage.HourlyCost)}
	if org.MaxNodesPerCluster > 0 {
		on := usage.NodesByCluster[cluster]
		room.NodesCapped, room.Nodes = true, max(org.MaxNodesPerCluster-on, 0)
		room.Reason = fmt.Sprintf("org %s has %d of its %d nodes per cluster on %s", org.Org, on, org.MaxNodesPerCluster, cluster)
	}
	if org.MaxNodes > 0 {
		total := usage.Nodes()
		if left := max(org.MaxNodes-total, 0); !room.NodesCapped || left < room.Nodes {
			room.NodesCapped, room.Nodes = true, left
			room.Reason = fmt.Sprintf("org %s has %d of its %d nodes on the fabric", org.Org, total, org.MaxNodes)
		}
	}
	if !room.Cost.Unlimited && room.Cost.Room <= costEpsilon {
		room.Reason = fmt.Sprintf("org %s spends $%.4f/h of its $%.4f/h budget", org.Org, usage.HourlyCost, org.MaxHourlyCost)
	}
	return room
}

// ShareNodes splits an org's room of nodes among the pools asking for
// more (pool ID → nodes wanted), max-min fair and deterministic: every
// pool gets what it asks up to an equal share, what is left goes on to
// those that want more, in pool-ID order for the last odd nodes. The
// shares never add up to more than room, so two pools of one org cannot
// together overshoot the org's ceiling.
func ShareNodes(room int, asks map[string]int) map[string]int {
	out := make(map[string]int, len(asks))
	ids := slices.Sorted(maps.Keys(asks))
	left := max(room, 0)
	for {
		var hungry []string
		for _, id := range ids {
			if asks[id] > out[id] {
				hungry = append(hungry, id)
			}
		}
		if left == 0 || len(hungry) == 0 {
			return out
		}
		each := left / len(hungry)
		if each == 0 {
			for _, id := range hungry[:left] {
				out[id]++
			}
			return out
		}
		for _, id := range hungry {
			give := min(each, asks[id]-out[id])
			out[id] += give
			left -= give
		}
	}
}
