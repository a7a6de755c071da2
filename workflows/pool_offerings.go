package workflows

import (
	"sort"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
)

// offeringUnavailableFor is how long an offering that ran out of capacity
// is not bought again: Karpenter's 3 minutes, long enough not to buy into
// the same shortage on the next decision, short enough that spot comes
// back soon after the provider has it again.
const offeringUnavailableFor = 3 * time.Minute

// maxOfferingFallbacks bounds the buys one decision tries after an
// insufficient-capacity answer: each marks its offering, so the next try
// is a different (dearer) offering, and on-demand comes within a few.
const maxOfferingFallbacks = 6

// maxUnavailableOfferings bounds the marks a pool keeps, so a provider out
// of everything cannot grow its state without bound.
const maxUnavailableOfferings = 64

// MetricOfferingsUnavailable is how many offerings the pool has marked
// unavailable now; MetricOfferingUnavailable counts the marks, by
// capacity type.
const (
	MetricOfferingsUnavailable = "visor_pool_offerings_unavailable"
	MetricOfferingUnavailable  = "visor_pool_offering_unavailable"
)

// unavailableOfferings forgets marks that expired and returns the rest.
func (s *PoolState) unavailableOfferings(now time.Time) map[string]time.Time {
	for k, until := range s.UnavailableOffering {
		if !now.Before(until) {
			delete(s.UnavailableOffering, k)
		}
	}
	if len(s.UnavailableOffering) == 0 {
		s.UnavailableOffering = nil
		return nil
	}
	out := make(map[string]time.Time, len(s.UnavailableOffering))
	for k, v := range s.UnavailableOffering {
		out[k] = v
	}
	return out
}

// unavailableCount is how many offerings are marked unavailable at now.
func (s *PoolState) unavailableCount(now time.Time) int {
	n := 0
	for _, until := range s.UnavailableOffering {
		if now.Before(until) {
			n++
		}
	}
	return n
}

// markUnavailable remembers that offering key ran out until until; past
// the bound the mark ending soonest goes (then by key, deterministically).
func (s *PoolState) markUnavailable(key string, until time.Time) {
	if s.UnavailableOffering == nil {
		s.UnavailableOffering = map[string]time.Time{}
	}
	s.UnavailableOffering[key] = until
	for len(s.UnavailableOffering) > maxUnavailableOfferings {
		keys := make([]string, 0, len(s.UnavailableOffering))
		for k := range s.UnavailableOffering {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := s.UnavailableOffering[keys[i]], s.UnavailableOffering[keys[j]]
			if !a.Equal(b) {
				return a.Before(b)
			}
			return keys[i] < keys[j]
		})
		delete(s.UnavailableOffering, keys[0])
	}
}

// planOfferings is what the planner is told about buying by offering.
func (p *pool) planOfferings(now time.Time) activities.PlanOfferings {
	if !p.rules.Offerings {
		return activities.PlanOfferings{}
	}
	pol := p.state.Policy
	return activities.PlanOfferings{
		On: true, CapacityTypes: pol.CapacityTypes, Zones: pol.Zones, MaxSpotShare: float64(pol.MaxSpotShare),
		Unavailable: p.state.unavailableOfferings(now),
	}
}

// soldOut marks the plan's offering unavailable after the provider had no
// capacity for it, and counts the mark.
func (p *pool) soldOut(ctx workflow.Context, plan activities.PlanResult) {
	p.state.markUnavailable(plan.OfferingKey(), workflow.Now(ctx).Add(offeringUnavailableFor))
	ct := plan.CapacityType.Or()
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		"pool": p.spec.Key.WorkflowID(), "capacity_type": string(ct),
	}).Counter(MetricOfferingUnavailable).Inc(1)
}

// offeringMachines counts the pool's machines by activities.MachineKey,
// so spend prices a spot group at the spot price.
func (s *PoolState) offeringMachines() map[string]int {
	if s.Provider == nil {
		return nil
	}
	out := map[string]int{}
	for _, g := range s.Provider.Groups {
		out[activities.MachineKey(g.Size, g.CapacityType, g.Zone)] += g.Target
	}
	return out
}
