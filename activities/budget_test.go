package activities

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

func TestBudgetCapsTheSpendAndSaysWhatItCut(t *testing.T) {
	catalog := []types.InstanceType{
		{Name: "small", MilliCPU: 2000, Memory: 4 * types.GiB, MaxPods: 110, HourlyPrice: 0.10},
		{Name: "large", MilliCPU: 8000, Memory: 16 * types.GiB, MaxPods: 110, HourlyPrice: 0.40},
	}
	var pods []types.PendingPod
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		pods = append(pods, types.PendingPod{Namespace: "web", Name: name, Requests: types.Resources{MilliCPU: 1500, Memory: types.GiB, Pods: 1}})
	}
	req := sizing.Request{Pending: pods, Catalog: catalog}
	full := sizing.PlanScaleUp(req)
	if full.HourlyCost < 0.5 {
		t.Fatalf("the unbudgeted plan should cost more than the test's budget: %+v", full)
	}
	// $1/h budget, $0.70/h already spent on 7 small machines: $0.30/h left.
	spend := spendOf(map[string]int{"small": 7}, priceBySize(catalog))
	plan, note := withinBudgets(full, req, nil, law.Budgets{PoolPerHour: 1.0, Spend: spend})
	if plan.HourlyCost > 0.30+1e-9 || plan.NewNodes == 0 {
		t.Fatalf("budgeted plan %d × %s at $%.2f/h, want something within $0.30/h", plan.NewNodes, plan.Size, plan.HourlyCost)
	}
	if !strings.Contains(note, "cost budget") || !strings.Contains(note, "$0.3000/h left") {
		t.Fatalf("note %q does not say what the budget cut", note)
	}
	// Nothing left: nothing bought, and said so.
	plan, note = withinBudgets(full, req, nil, law.Budgets{PoolPerHour: 0.70, Spend: spend})
	if plan.NewNodes != 0 || !strings.Contains(note, "no node fits the budget") {
		t.Fatalf("over budget: %d nodes, note %q", plan.NewNodes, note)
	}
	if p, n := withinBudgets(full, req, nil, law.Budgets{Spend: spend}); p.NewNodes != full.NewNodes || n != "" {
		t.Fatal("no budget must leave the plan alone")
	}
}

func TestOrgBudgetCutsThePlanAndSaysSo(t *testing.T) {
	catalog := []types.InstanceType{{Name: "small", MilliCPU: 2000, Memory: 4 * types.GiB, MaxPods: 110, HourlyPrice: 0.10}}
	pods := []types.PendingPod{}
	for _, name := range []string{"a", "b", "c", "d"} {
		pods = append(pods, types.PendingPod{Namespace: "web", Name: name, Requests: types.Resources{MilliCPU: 1500, Memory: types.GiB, Pods: 1}})
	}
	req := sizing.Request{Pending: pods, Catalog: catalog}
	full := sizing.PlanScaleUp(req)
	plan, note := withinBudgets(full, req, nil, law.Budgets{OrgCapped: true, OrgRoom: 0.25})
	if plan.NewNodes != 2 || !strings.Contains(note, "org cost budget") {
		t.Fatalf("org room $0.25/h: %d nodes, note %q; want 2 × small and the org budget named", plan.NewNodes, note)
	}
	if plan, note := withinBudgets(full, req, nil, law.Budgets{OrgCapped: true, OrgRoom: -1}); plan.NewNodes != 0 || !strings.Contains(note, "no node fits") {
		t.Fatalf("an org over its budget buys nothing: %d, %q", plan.NewNodes, note)
	}
}
