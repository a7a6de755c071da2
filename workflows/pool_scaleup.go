package workflows

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// purchase buys nodes for pending pods (law.ActionScaleUp, a manual
// target above the pool's size): the org's room, a plan, the provider's
// answer, each offering that ran out tried no more for a while.
type purchase struct{ *pool }

// maxSizeFallbacks bounds re-planning when sizes run out of capacity.
const maxSizeFallbacks = 3

// scaleUp sizes the overdue pods and provisions the plan.
func (p purchase) scaleUp(ctx workflow.Context, d law.Decision) {
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionScaleUp), Reason: d.Reason}
	if added := p.grow(ctx, rec, d.Pods, d.MinNewNodes, d.MaxNewNodes); added > 0 && d.Prewarm > 0 {
		// Bought (partly) on forecast: judged once the rise was due.
		p.state.Prewarmed(workflow.Now(ctx), d.Prewarm)
	}
}

// grow provisions for the pods (at least minNew nodes, at most maxNew),
// records the decision with its outcome and says how many it asked for.
func (p purchase) grow(ctx workflow.Context, rec contract.DecisionRecord, pods []types.PendingPod, minNew, maxNew int) int {
	org := p.orgRoom(ctx)
	p.state.OrgNote = org.Note
	if org.Nodes <= 0 {
		rec.Outcome = poolcore.OutcomeNothingBought + org.Note
		p.state.LastScaleUp = workflow.Now(ctx) // wait a cooldown, not a wake-up
		p.state.Record(rec)
		return 0
	}
	maxNew = min(maxNew, org.Nodes)
	minNew = min(minNew, org.Nodes)
	added, size, offering, err := p.provision(ctx, rec.Seq, pods, minNew, maxNew, org)
	rec.Added, rec.Size = added, size
	switch {
	case err != nil:
		rec.Outcome = "failed: " + err.Error()
	case added == 0 && p.state.Budget != "":
		// The budget leaves nothing to buy: wait a cooldown, not a wake-up.
		rec.Outcome = poolcore.OutcomeNothingBought + p.state.Budget
		p.state.LastScaleUp = workflow.Now(ctx)
	case added == 0:
		rec.Outcome = poolcore.OutcomeNothingToAdd + p.state.UnplaceableSummary()
	default:
		rec.Outcome = fmt.Sprintf("asked for %d × %s", added, size)
		p.state.LastScaleUp = workflow.Now(ctx)
	}
	if offering != "" {
		rec.Reason += "; buys " + offering
	}
	p.state.Record(rec)
	return added
}

// provision plans and provisions within the org's room, falling back to
// the next size when the provider is out of capacity. It returns how many
// nodes of which size were asked for, and which offering was bought and
// why (empty without offerings).
func (p purchase) provision(ctx workflow.Context, seq int64, pods []types.PendingPod, minNew, maxNew int, org law.OrgRoom) (int, string, string, error) {
	excluded := p.state.BackedOffSizes(workflow.Now(ctx))
	fallbacks, machines := maxSizeFallbacks, p.state.MachinesBySize()
	if p.rules.Offerings {
		fallbacks, machines = maxOfferingFallbacks, p.state.OfferingMachines()
	}
	var tried []string // offerings that ran out in this decision
	for attempt := 0; attempt <= fallbacks; attempt++ {
		var plan activities.PlanResult
		in := activities.PlanInput{
			Key: p.spec.Key, Pods: pods, Existing: p.state.PlanRoom(workflow.Now(ctx), p.rules), AllowedSizes: p.state.Policy.AllowedSizes,
			PriceOverrides: p.spec.PriceOverrides, MinNewNodes: minNew, MaxNewNodes: maxNew, ExcludeSizes: excluded,
			NodeLabels: p.state.Policy.NodeLabels, NodeTaints: p.state.Policy.NodeTaints, Region: p.state.Gate.Region,
			DaemonOverhead: p.state.DaemonOverhead(),
			MaxHourlyCost:  p.state.Policy.MaxHourlyCost, Machines: machines, Offerings: p.planOfferings(workflow.Now(ctx)),
			OrgBudget: org.CostCapped, OrgBudgetRoom: org.CostRoom,
			FewerNodes: p.rules.FewerNodes, Objective: p.state.Policy.SizingObjective,
			Promised: p.state.AwaitingPods(), SkipGroups: p.state.DriftedGroups(p.rules), PriceAdjustments: p.state.Policy.PriceAdjustments,
		}
		if p.rules.LookAhead {
			in.Expected = law.RunningMix(p.state.Observation)
		}
		if v := p.state.Provider; v != nil && workflow.Now(ctx).Sub(v.ReadAt) < freshGroupsAge {
			// Read for this purchase (act reads before every action):
			// the plan needs no read of its own.
			in.Groups, in.GroupsKnown = activities.PlanGroupsOf(*v), true
		}
		if err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, quickActivity, "plan scale-up"), a.PlanScaleUp, in), &plan); err != nil {
			return 0, "", "", err
		}
		teller{p.pool}.tellUnplaceable(ctx, p.park(plan.Unplaceable))
		p.apply(ctx, poolcore.Planned{Budget: plan.Budget, SizeRoom: plan.SizeRoom, SizeZones: plan.SizeZones, SizePrice: plan.SizePrice, SizeGPUModel: plan.SizeGPUModel})
		if plan.NewNodes == 0 {
			return 0, "", "", nil
		}
		var res activities.ProvisionResult
		pin := activities.ProvisionInput{
			Key: p.spec.Key, Size: plan.Size, GroupID: plan.GroupID, Target: plan.GroupTarget + plan.NewNodes,
			IdempotencyKey: p.idempotencyKey(seq, fmt.Sprintf("provision-%d", attempt)),
			NodeLabels:     p.state.Policy.NodeLabels, NodeTaints: p.state.Policy.NodeTaints,
			CapacityType: plan.CapacityType, Zone: plan.Zone,
		}
		if plan.GroupID == "" {
			pin.GroupSuffix = p.state.GroupSuffix(p.rules, plan.Size, plan.CapacityType, plan.Zone)
		}
		summary := fmt.Sprintf("provision %d × %s", plan.NewNodes, plan.Size)
		err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, summary), a.Provision, pin), &res)
		if isErrorClass(err, errclass.InsufficientCapacity) {
			if p.rules.Offerings {
				p.soldOut(ctx, plan)
				tried = append(tried, plan.OfferingKey())
				continue
			}
			excluded = append(excluded, plan.Size)
			continue
		}
		if err != nil {
			return 0, plan.Size, "", err
		}
		p.state.StampGroup(p.rules, res.GroupID, plan.GroupID == "", pin.NodeLabels, pin.NodeTaints)
		p.apply(ctx, poolcore.Bought{Seq: seq, Size: plan.Size, NewNodes: plan.NewNodes, For: boughtFor(plan, pods)})
		teller{p.pool}.tellBought(ctx, seq, plan, pods)
		p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
		return plan.NewNodes, plan.Size, plan.Offering, nil
	}
	if p.rules.Offerings {
		return 0, "", "", fmt.Errorf("no capacity in offerings %s (each not bought again for %s)", strings.Join(tried, ", "), poolcore.OfferingUnavailableFor)
	}
	return 0, "", "", fmt.Errorf("no capacity in sizes %s", strings.Join(excluded, ", "))
}

// park records what the plan could not place. Only a pod no allowed size
// can ever hold is parked until it, the policy or the catalog changes; a
// pod that merely did not fit the size this plan grew is deferred to the
// very next decision. It returns the pods parked now that were not before.
func (p purchase) park(unplaceable []activities.UnplaceablePod) (fresh []activities.UnplaceablePod) {
	for _, u := range unplaceable {
		if strings.HasPrefix(u.Pod, law.PrewarmNamespace+"/") {
			continue // a forecast's stand-in: nobody to tell, nothing to keep
		}
		switch {
		case u.Code == sizing.CodeNoFit, u.Code == sizing.CodeInvalidRequest:
			if _, told := p.state.Unplaceable[u.Pod]; !told {
				fresh = append(fresh, u)
			}
			p.state.Unplaceable[u.Pod] = u.Reason
		case u.Code == sizing.CodeOtherSize:
			p.state.Deferred[u.Pod] = true
		}
	}
	return fresh
}

// planOfferings is what the planner is told about buying by offering.
func (p purchase) planOfferings(now time.Time) activities.PlanOfferings {
	if !p.rules.Offerings {
		return activities.PlanOfferings{}
	}
	pol := p.state.Policy
	return activities.PlanOfferings{
		On: true, CapacityTypes: pol.CapacityTypes, Zones: pol.Zones, MaxSpotShare: float64(pol.MaxSpotShare),
		Unavailable: p.state.UnavailableOfferings(now),
	}
}

// soldOut marks the plan's offering unavailable after the provider had no
// capacity for it, and counts the mark.
func (p purchase) soldOut(ctx workflow.Context, plan activities.PlanResult) {
	p.state.MarkUnavailable(plan.OfferingKey(), workflow.Now(ctx).Add(poolcore.OfferingUnavailableFor))
	ct := plan.CapacityType.Or()
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		"pool": p.spec.Key.WorkflowID(), "capacity_type": string(ct),
	}).Counter(MetricOfferingUnavailable).Inc(1)
}

// orgRoom is the room the org's ceilings leave this pool (law.OrgRoomOn),
// from the org's pools' published targets: how many nodes, what it says,
// and what the org's cost budget leaves the plan. A ceiling that cannot
// be read leaves no room.
func (p purchase) orgRoom(ctx workflow.Context) law.OrgRoom {
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

// freshGroupsAge is how old a provider read may be for a plan to pick
// its group from it: the read act made before this purchase, not one of
// a past wake-up.
const freshGroupsAge = 30 * time.Second

// boughtFor are the pods a purchase was made for: those the plan placed,
// less the headroom's placeholder pods.
func boughtFor(plan activities.PlanResult, pods []types.PendingPod) []types.PendingPod {
	left := make(map[string]bool, len(plan.Unplaceable))
	for _, u := range plan.Unplaceable {
		left[u.Pod] = true
	}
	out := make([]types.PendingPod, 0, len(pods))
	for _, pod := range pods {
		if !left[pod.Key()] && !law.IsHeadroomPod(pod) {
			out = append(out, pod)
		}
	}
	return out
}

// maxOfferingFallbacks bounds the buys one decision tries after an
// insufficient-capacity answer: each marks its offering, so the next try
// is a different (dearer) offering, and on-demand comes within a few.
const maxOfferingFallbacks = 6
