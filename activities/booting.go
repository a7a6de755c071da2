package activities

import (
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// withCatalogRoom gives machines the pool asked for but that have not
// registered yet (they come with a name and a size only) the allocatable
// room of their size, so the planner counts them as booting room and one
// pod never buys two nodes however slowly machines boot.
func withCatalogRoom(nodes []types.NodeObservation, catalog []types.InstanceType) []types.NodeObservation {
	bySize := make(map[string]types.InstanceType, len(catalog))
	for _, t := range catalog {
		if _, ok := bySize[t.Name]; !ok {
			bySize[t.Name] = t
		}
	}
	out := make([]types.NodeObservation, 0, len(nodes))
	for _, n := range nodes {
		if n.Allocatable == (types.Resources{}) {
			t, ok := bySize[n.Size]
			if !ok {
				continue // a size the catalog no longer has gives no room we can vouch for
			}
			n.Allocatable = t.Allocatable()
		}
		out = append(out, n)
	}
	return out
}

// withDaemonOverhead adds what DaemonSet pods take on every node to each
// size's overhead: a new node runs them before any pending pod.
func withDaemonOverhead(catalog []types.InstanceType, daemons types.Resources) []types.InstanceType {
	if daemons == (types.Resources{}) || daemons.IsNegative() {
		return catalog
	}
	out := make([]types.InstanceType, len(catalog))
	for i, t := range catalog {
		t.Overhead = t.Overhead.Add(daemons)
		out[i] = t
	}
	return out
}

// roomBySize is each size's room for pods.
func roomBySize(catalog []types.InstanceType) map[string]types.Resources {
	out := make(map[string]types.Resources, len(catalog))
	for _, t := range catalog {
		out[t.Name] = t.Allocatable()
	}
	return out
}

// zonesBySize is the zones each size is offered in, for sizes offered in
// at least one named zone (nil when none is).
func zonesBySize(catalog []types.InstanceType) map[string][]string {
	var out map[string][]string
	for _, t := range catalog {
		var zones []string
		for _, o := range t.OfferingsOrDefault() {
			if o.Zone != "" && !slices.Contains(zones, o.Zone) {
				zones = append(zones, o.Zone)
			}
		}
		if len(zones) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			slices.Sort(zones)
			out[t.Name] = zones
		}
	}
	return out
}

// gpuModelBySize is each GPU size's GPU model (sizes without GPUs or
// without a known model are left out); nil when there is none.
func gpuModelBySize(catalog []types.InstanceType) map[string]string {
	var out map[string]string
	for _, t := range catalog {
		if t.GPUs > 0 && t.GPUModel != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[t.Name] = t.GPUModel
		}
	}
	return out
}

// priceBySize is each size's hourly price.
func priceBySize(catalog []types.InstanceType) map[string]float64 {
	out := make(map[string]float64, len(catalog))
	for _, t := range catalog {
		out[t.Name] = t.HourlyPrice
	}
	return out
}

// spendOf prices the pool's machines, counted by MachineKey, at what they
// cost: a size's price, or its offering's (spot at the spot price).
func spendOf(machines map[string]int, prices map[string]float64) float64 {
	total := 0.0
	for _, k := range sortedKeys(machines) {
		total += float64(machines[k]) * prices[k]
	}
	return total
}

// withinBudgets cuts a plan to what the cost budgets leave (law.Budgets),
// planning again for the size and count it can pay, and says what it cut.
func withinBudgets(plan sizing.Plan, req sizing.Request, excluded []string, b law.Budgets) (sizing.Plan, string) {
	which, room, cut := b.Cut(plan.NewNodes, plan.HourlyCost)
	if !cut {
		return plan, ""
	}
	fit := law.FitPlanToBudget(plan, max(room, 0))
	reason := strings.Replace(fit.Reason, "cost budget", which, 1)
	if fit.NewNodes == 0 {
		return sizing.Plan{Unplaceable: plan.Unplaceable, Alternatives: plan.Alternatives}, reason
	}
	return sizing.PlanScaleUpExcluding(law.BudgetRequest(req, fit), excluded), reason
}

// budgets are the cost ceilings the plan is held at, the pool spending
// spend per hour.
func (in PlanInput) budgets(spend float64) law.Budgets {
	return law.Budgets{PoolPerHour: in.MaxHourlyCost, Spend: spend, OrgCapped: in.OrgBudget, OrgRoom: in.OrgBudgetRoom}
}
