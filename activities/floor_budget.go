package activities

import (
	"fmt"
	"math"
)

// floorWithinBudgets holds growth the floor asks for (minNodes, a manual
// target: want nodes of size at price each, no pod asking) at the cost
// ceilings: the pool's own budget and the org's, which the platform sets.
// A ceiling wins over the floor; a floor it cuts is said in the note, and
// the pool holds at the ceiling until the budget leaves room.
func floorWithinBudgets(want int, size string, price float64, in PlanInput, spend float64) (int, string) {
	if price <= 0 {
		return want, ""
	}
	n, note := want, ""
	limit := func(which string, room float64) {
		fit := int(math.Floor((max(room, 0) + 1e-9) / price))
		if fit >= n {
			return
		}
		n = fit
		note = fmt.Sprintf("%s holds the floor: %d more × %s would cost $%.4f/h but $%.4f/h is left; buying %d (a cost ceiling wins over minNodes)",
			which, want, size, float64(want)*price, max(room, 0), n)
	}
	if in.MaxHourlyCost > 0 {
		limit("cost budget", in.MaxHourlyCost-spend)
	}
	if in.OrgBudget {
		limit("org cost budget", in.OrgBudgetRoom)
	}
	return n, note
}
