package workflows

import (
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// orgRoom is the room the org's ceilings leave this pool (law.OrgRoomOn),
// from the org's pools' published targets: how many nodes, what it says,
// and what the org's cost budget leaves the plan. A ceiling that cannot
// be read leaves no room.
func (p *pool) orgRoom(ctx workflow.Context) law.OrgRoom {
	var platform *types.OrgPolicy
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	if err := workflow.ExecuteLocalActivity(lctx, a.PlatformOrgLimits, p.spec.Key.Org).Get(ctx, &platform); err != nil {
		return law.OrgRoom{Note: fmt.Sprintf("org ceiling: the platform's limits on org %s unknown (%v)", p.spec.Key.Org, err)}
	}
	if p.state.Policy.OrgLimits == nil && platform == nil {
		return law.OrgRoom{Nodes: math.MaxInt} // no limits anywhere: no listing
	}
	actx := p.platformCtx(ctx, quickActivity, "read org usage")
	var u activities.OrgUsage
	if err := workflow.ExecuteActivity(actx, a.ReadOrgUsage, p.spec.Key).Get(ctx, &u); err != nil {
		// Unknown usage buys nothing: a ceiling that cannot be checked holds.
		return law.OrgRoom{Note: fmt.Sprintf("org ceiling: usage of org %s unknown (%v)", p.spec.Key.Org, err)}
	}
	lim := law.StricterOrgLimits(p.state.Policy.OrgLimits, platform)
	return law.OrgRoomOn(lim, law.OrgUsage{Fabric: u.Fabric, Cluster: u.Cluster, HourlyCost: u.HourlyCost}, p.spec.Key.Org, p.spec.Key.Cluster)
}
