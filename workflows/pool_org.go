package workflows

import (
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/types"
)

// orgRoom is how many nodes the org's ceilings leave this pool, from the
// org's pools' published targets (one visibility listing, never a query
// to each pool), and what it says. Pools that scale at the same moment
// can each take the last room: the ceiling holds to within one decision
// per pool, and no pool grows past it after that.
func (p *pool) orgRoom(ctx workflow.Context) (int, string) {
	var platform *types.OrgPolicy
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	if err := workflow.ExecuteLocalActivity(lctx, a.PlatformOrgLimits, p.spec.Key.Org).Get(ctx, &platform); err != nil {
		return 0, fmt.Sprintf("org ceiling: the platform's limits on org %s unknown (%v)", p.spec.Key.Org, err)
	}
	if p.state.Policy.OrgLimits == nil && platform == nil {
		return math.MaxInt, "" // no limits anywhere: no listing
	}
	actx := p.platformCtx(ctx, quickActivity, "read org usage")
	var u activities.OrgUsage
	if err := workflow.ExecuteActivity(actx, a.ReadOrgUsage, p.spec.Key).Get(ctx, &u); err != nil {
		// Unknown usage buys nothing: a ceiling that cannot be checked holds.
		return 0, fmt.Sprintf("org ceiling: usage of org %s unknown (%v)", p.spec.Key.Org, err)
	}
	lim := stricterOrgLimits(p.state.Policy.OrgLimits, platform)
	if lim.MaxHourlyCost > 0 {
		// The org's cost budget is checked by the plan, which knows prices.
		p.orgBudget = orgBudget{set: true, room: lim.MaxHourlyCost - u.HourlyCost}
	}
	room, note := math.MaxInt, ""
	if lim.MaxNodes > 0 {
		if r := lim.MaxNodes - u.Fabric; r < room {
			room, note = r, fmt.Sprintf("org ceiling: org %s has %d of its %d nodes on the fabric", p.spec.Key.Org, u.Fabric, lim.MaxNodes)
		}
	}
	if lim.MaxNodesPerCluster > 0 {
		if r := lim.MaxNodesPerCluster - u.Cluster; r < room {
			room, note = r, fmt.Sprintf("org ceiling: org %s has %d of its %d nodes on cluster %s", p.spec.Key.Org, u.Cluster, lim.MaxNodesPerCluster, p.spec.Key.Cluster)
		}
	}
	if room > 0 {
		note = ""
	}
	return room, note
}

// orgBudget is what the org's cost budget leaves the next plan per hour.
type orgBudget struct {
	set  bool
	room float64
}

// stricterOrgLimits is, field by field, the tighter of the pool policy's
// org limits and the platform's (0 is no limit): a spec may tighten the
// platform's limits, never loosen them.
func stricterOrgLimits(policy, platform *types.OrgPolicy) types.OrgPolicy {
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
