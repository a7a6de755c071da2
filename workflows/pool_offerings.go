package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// maxOfferingFallbacks bounds the buys one decision tries after an
// insufficient-capacity answer: each marks its offering, so the next try
// is a different (dearer) offering, and on-demand comes within a few.
const maxOfferingFallbacks = 6

// MetricOfferingsUnavailable is how many offerings the pool has marked
// unavailable now; MetricOfferingUnavailable counts the marks, by
// capacity type.
const (
	MetricOfferingsUnavailable = "visor_pool_offerings_unavailable"
	MetricOfferingUnavailable  = "visor_pool_offering_unavailable"
)

// planOfferings is what the planner is told about buying by offering.
func (p *pool) planOfferings(now time.Time) activities.PlanOfferings {
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
func (p *pool) soldOut(ctx workflow.Context, plan activities.PlanResult) {
	p.state.MarkUnavailable(plan.OfferingKey(), workflow.Now(ctx).Add(poolcore.OfferingUnavailableFor))
	ct := plan.CapacityType.Or()
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		"pool": p.spec.Key.WorkflowID(), "capacity_type": string(ct),
	}).Counter(MetricOfferingUnavailable).Inc(1)
}
