package law

import (
	"fmt"
	"math"
	"sort"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// costEpsilon absorbs float rounding in sums of hourly prices, so a plan
// that costs exactly the room left is within it.
const costEpsilon = 1e-9

// BudgetVerdict is a plan checked against a budget.
type BudgetVerdict struct {
	// Unlimited: no budget (zero) is set; the other fields are zero.
	Unlimited bool `json:"unlimited,omitempty"`
	Allowed   bool `json:"allowed"`
	// Room is what is left of the budget per hour before the plan.
	Room float64 `json:"room"`
	// Over is how much the plan exceeds Room per hour; zero if allowed.
	Over float64 `json:"over,omitempty"`
}

// WithinBudget checks a plan's hourly cost against a budget per hour and
// what is already spent per hour. A budget of zero is no budget.
func WithinBudget(planHourlyCost, budgetPerHour, spendPerHour float64) BudgetVerdict {
	if budgetPerHour <= 0 {
		return BudgetVerdict{Unlimited: true, Allowed: true}
	}
	room := math.Max(budgetPerHour-spendPerHour, 0)
	if planHourlyCost <= room+costEpsilon {
		return BudgetVerdict{Allowed: true, Room: room}
	}
	return BudgetVerdict{Room: room, Over: planHourlyCost - room}
}

// BudgetedPlan is what a budget leaves of a scale-up plan.
type BudgetedPlan struct {
	Size       string  `json:"size,omitempty"`
	NewNodes   int     `json:"newNodes"`
	HourlyCost float64 `json:"hourlyCost"`
	// Cut: the plan was cut to the budget; Blocked is the hourly cost the
	// full plan needed beyond the room, and Reason says it with amounts.
	Cut     bool    `json:"cut,omitempty"`
	Blocked float64 `json:"blocked,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// FitPlanToBudget cuts a plan to at most room per hour. A plan within
// room is kept whole. Otherwise it picks, among the plan's alternatives
// (every size the planner priced), the one whose affordable share of nodes
// would hold the most pods (fewer nodes, or a smaller size), cheaper
// first on a tie. NewNodes zero means nothing is affordable. The caller
// plans again with BudgetRequest to get the placements.
func FitPlanToBudget(plan sizing.Plan, room float64) BudgetedPlan {
	if plan.NewNodes == 0 || plan.HourlyCost <= room+costEpsilon {
		return BudgetedPlan{Size: plan.Size, NewNodes: plan.NewNodes, HourlyCost: plan.HourlyCost}
	}
	type option struct {
		size   string
		nodes  int
		cost   float64
		served float64
	}
	var opts []option
	for _, a := range plan.Alternatives {
		if a.Skipped != "" || a.NewNodes <= 0 || a.HourlyCost <= 0 {
			continue
		}
		price := a.HourlyCost / float64(a.NewNodes)
		k := min(a.NewNodes, int(math.Floor(room/price+costEpsilon)))
		if k <= 0 {
			continue
		}
		opts = append(opts, option{a.Size, k, price * float64(k), float64(a.Placed) * float64(k) / float64(a.NewNodes)})
	}
	sort.SliceStable(opts, func(i, j int) bool {
		if opts[i].served != opts[j].served {
			return opts[i].served > opts[j].served
		}
		return opts[i].cost < opts[j].cost
	})
	out := BudgetedPlan{Cut: true, Blocked: plan.HourlyCost - room}
	want := fmt.Sprintf("%d × %s at $%.4f/h", plan.NewNodes, plan.Size, plan.HourlyCost)
	if len(opts) == 0 {
		out.Reason = fmt.Sprintf("cost budget: %s exceeds the $%.4f/h left by $%.4f/h; no node fits the budget", want, room, out.Blocked)
		return out
	}
	o := opts[0]
	out.Size, out.NewNodes, out.HourlyCost = o.size, o.nodes, o.cost
	out.Reason = fmt.Sprintf("cost budget: %s exceeds the $%.4f/h left by $%.4f/h; buying %d × %s at $%.4f/h", want, room, out.Blocked, o.nodes, o.size, o.cost)
	return out
}

// BudgetRequest narrows a sizing request to a budgeted plan's size and
// node count, so planning it again places the pods the budget pays for.
func BudgetRequest(req sizing.Request, b BudgetedPlan) sizing.Request {
	var catalog []types.InstanceType
	for _, t := range req.Catalog {
		if t.Name == b.Size {
			catalog = append(catalog, t)
		}
	}
	req.Catalog = catalog
	req.MaxNewNodes = b.NewNodes
	if b.NewNodes == 0 {
		req.MaxNewNodes = -1
	}
	return req
}

// Budgets are the cost ceilings a scale-up is held at: the pool's own
// budget (PoolPerHour, 0: none) less what the pool spends, and the room
// its org's budget leaves (OrgCapped; zero room is a room).
type Budgets struct {
	PoolPerHour float64
	Spend       float64
	OrgCapped   bool
	OrgRoom     float64
}

// Cut says which budget cuts a plan of nodes costing planCost per hour,
// and the room per hour it leaves (negative when over): the pool's own
// first, else the org's. cut is false when the plan is within both. The
// caller cuts the plan with FitPlanToBudget and plans again.
func (b Budgets) Cut(nodes int, planCost float64) (which string, room float64, cut bool) {
	if nodes == 0 {
		return "", 0, false
	}
	if v := WithinBudget(planCost, b.PoolPerHour, b.Spend); !v.Allowed {
		return "cost budget", v.Room, true
	}
	if b.OrgCapped && planCost > b.OrgRoom+costEpsilon {
		return "org cost budget", b.OrgRoom, true
	}
	return "", 0, false
}

// HoldFloor holds growth the floor asks for (minNodes, a manual target:
// want nodes of size at price each, no pod asking) at the cost ceilings.
// A ceiling wins over the floor; a floor it cuts is said in the note, and
// the pool holds at the ceiling until the budget leaves room.
func (b Budgets) HoldFloor(want int, size string, price float64) (int, string) {
	if price <= 0 {
		return want, ""
	}
	n, note := want, ""
	limit := func(which string, room float64) {
		fit := int(math.Floor((max(room, 0) + costEpsilon) / price))
		if fit >= n {
			return
		}
		n = fit
		note = fmt.Sprintf("%s holds the floor: %d more × %s would cost $%.4f/h but $%.4f/h is left; buying %d (a cost ceiling wins over minNodes)",
			which, want, size, float64(want)*price, max(room, 0), n)
	}
	if b.PoolPerHour > 0 {
		limit("cost budget", b.PoolPerHour-b.Spend)
	}
	if b.OrgCapped {
		limit("org cost budget", b.OrgRoom)
	}
	return n, note
}
