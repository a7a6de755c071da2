package law

import (
	"fmt"

	"github.com/hanzoai/visor-fleet/types"
)

// The balanced consolidation policy (types.DisruptBalanced), after
// Karpenter's Balanced: a consolidation move goes ahead only when its
// share of the pool's hourly cost saved is at least its share of the
// pool's disruption weight (each pod one, or the node's DisruptionCost,
// which weighs priority and pod-deletion-cost). Without prices nothing is
// judged worth disrupting.

func emptyNode(n types.NodeObservation) bool {
	r := n.Requested
	return r.Pods <= 0 && r.MilliCPU == 0 && r.Memory == 0 && r.GPUs == 0
}

// disruptionWeight is what draining n disrupts.
func disruptionWeight(n types.NodeObservation) float64 {
	if n.DisruptionCost > 0 {
		return n.DisruptionCost
	}
	return float64(max(n.Requested.Pods, 0))
}

// poolShares is the Ready nodes' hourly cost and disruption weight.
func poolShares(in DecisionInput) (cost, weight float64) {
	for _, n := range in.Observation.Nodes {
		if n.State == types.NodeReady {
			cost += in.SizePrice[n.Size]
			weight += disruptionWeight(n)
		}
	}
	return cost, weight
}

// balancedMove says whether saving saves $/h by disrupting weight keeps
// the balanced ratio, and the shares for the reason.
func balancedMove(in DecisionInput, saves, weight float64) (bool, string) {
	if weight <= 0 {
		return true, ""
	}
	cost, all := poolShares(in)
	if cost <= 0 || all <= 0 {
		return false, "no prices to weigh the saving"
	}
	ss, ds := saves/cost, weight/all
	return ss >= ds, fmt.Sprintf("saves %.1f%% of the pool's cost for %.1f%% of its pods' disruption", 100*ss, 100*ds)
}

// balancedPrefix keeps the longest prefix of the removal whose savings
// share covers its disruption share.
func balancedPrefix(in DecisionInput, remove []string, d *Decision) []string {
	saves, weight := 0.0, 0.0
	keep := 0
	var last string
	for i, name := range remove {
		n, _ := nodeNamed(in.Observation, name)
		saves += in.SizePrice[n.Size]
		weight += disruptionWeight(n)
		ok, why := balancedMove(in, saves, weight)
		if ok {
			keep = i + 1
		} else if last == "" {
			last = why
		}
	}
	if keep < len(remove) {
		d.Skipped = append(d.Skipped, fmt.Sprintf("%s not consolidated under the balanced policy: %s", Plural(len(remove)-keep, "node"), last))
	}
	return remove[:keep]
}

// balancedReplacement withdraws a replacement the balanced policy does
// not find worth its disruption.
func balancedReplacement(in DecisionInput, d *Decision) {
	r := d.Replacing
	if r == nil {
		return
	}
	weight := 0.0
	for _, name := range r.Old {
		n, _ := nodeNamed(in.Observation, name)
		weight += disruptionWeight(n)
	}
	if ok, why := balancedMove(in, r.Saves, weight); !ok {
		d.Skipped = append(d.Skipped, fmt.Sprintf("replacing %s not worth it under the balanced policy: %s", Plural(len(r.Old), "node"), why))
		d.Action, d.Replacing, d.Reason = ActionNone, nil, ""
	}
}
