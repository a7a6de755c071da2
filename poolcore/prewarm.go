package poolcore

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// Predictive pre-warm (law.Rules.Prewarm): the pool learns its demand by
// time of day and week from each observation (State.Demand, bounded by
// law.ForecastSlotsPerWeek), and, once it has a day of history, buys a
// provisioning delay ahead of the rise it expects. It never removes a
// node on a forecast; it only holds back a removal that would leave less
// than the forecast needs.

// observeDemand feeds the model one observation: the requests of the
// pool's pods, bound and pending.
func (s *State) observeDemand(obs types.PoolObservation) {
	req, n := law.ObservedDemand(obs)
	s.Demand = law.ObserveDemand(s.Demand, obs.ObservedAt, req, n)
}

// prewarmLead is how far ahead a pre-warm buys: a provisioning delay and
// the sample interval the pool may wait to see the rise.
func (s *State) prewarmLead() time.Duration {
	return s.Policy.EffectiveProvisioningDelay() + s.Policy.SampleInterval.D()
}

// withPrewarm gives the law the stand-in pods of the demand the model
// expects, and keeps the Ready room the forecast needs on top of what
// the headroom keeps.
func (s *State) withPrewarm(in *law.DecisionInput, pool types.PoolKey, now time.Time) {
	if s.Demand == nil || s.Observation == nil {
		return
	}
	lead, m, nodes := s.prewarmLead(), s.Demand, s.Observation.Nodes
	in.Prewarm, in.PrewarmWhy = law.PrewarmPods(m, pool, now, lead, nodes)
	keeps := in.KeepsHeadroom
	in.KeepsHeadroom = func(remove []string) (bool, string) {
		if keeps != nil {
			if ok, why := keeps(remove); !ok {
				return ok, why
			}
		}
		return law.ForecastKeeps(m, now, lead, nodes, remove)
	}
}

// Prewarmed records a scale-up that bought for pods the model expects,
// so whether the forecast came true is judged and counted.
func (s *State) Prewarmed(now time.Time, pods int) {
	if pods > 0 {
		law.RecordPrewarm(s.Demand, now, now.Add(s.prewarmLead()), pods)
	}
}

// ForecastStatus sums the pre-warm up for the status query: what the
// model has learned, how far off it is, and how the pre-warms came out.
func (s *State) ForecastStatus() string {
	m := s.Demand
	if m == nil {
		return ""
	}
	out := fmt.Sprintf("demand learned since %s, forecast error %.0f%%", m.Since.UTC().Format(time.RFC3339), 100*m.ForecastError())
	if m.Last.Sub(m.Since) < law.ForecastHistory {
		out += "; no pre-warm before a day of history"
	}
	if m.Hits+m.Misses > 0 {
		out += fmt.Sprintf("; pre-warms came true %d of %d", m.Hits, m.Hits+m.Misses)
	}
	if r := m.Prewarm; r != nil {
		out += fmt.Sprintf("; last bought at %s for %s, for %s", r.At.UTC().Format(time.RFC3339), law.Plural(r.Pods, "expected pod"), r.For.UTC().Format(time.RFC3339))
		if r.Judged {
			out += fmt.Sprintf(" (came true: %t)", r.CameTrue)
		}
	}
	return out
}
