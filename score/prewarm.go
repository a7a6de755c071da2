package score

import (
	"fmt"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// Predictive pre-warm in the simulator (law.Rules.Prewarm): the law's
// demand model learns from each observation as the pool workflow would,
// and a day of history comes from the pool's previous day (another day
// of the same trace generator), replayed into the model before the run.

// PrewarmStats are what the pre-warm did over a run.
type PrewarmStats struct {
	// ScaleUps bought on forecast, and the stand-in pods they were for.
	ScaleUps, Pods int
	// Hits and Misses: pre-warms whose forecast came true or did not.
	Hits, Misses int
	// ForecastError is the model's relative CPU error over the run's slots.
	ForecastError float64
}

// NewLawPrewarm is the pool's law with pre-warm on, its model fed first
// with history, a day (or more) ending where the trace begins.
func NewLawPrewarm(name string, policy types.Policy, catalog []types.InstanceType, rules Rules, history Trace) *Law {
	l := NewLawWith(name, policy, catalog, rules)
	l.rules.Prewarm = true
	l.model = learn(history)
	return l
}

// PrewarmStats reports what the law's pre-warm did (zero without it).
func (l *Law) PrewarmStats() PrewarmStats {
	s := l.prewarmStats
	if l.model != nil {
		s.Hits, s.Misses, s.ForecastError = l.model.Hits, l.model.Misses, l.model.ForecastError()
	}
	return s
}

// learn replays the whole days of a trace's demand (the requests of the
// pods alive, each minute) into a new model, the last day ending at the
// simulation's epoch, so times of day line up.
func learn(history Trace) *law.DemandModel {
	span := history.Span().Truncate(24 * time.Hour)
	if span <= 0 {
		return nil
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-span)
	pods := slices.Clone(history.Pods)
	var m *law.DemandModel
	for t := time.Duration(0); t < span; t += time.Minute {
		var req types.Resources
		n := 0
		for _, p := range pods {
			if p.Arrive <= t && p.Depart > t {
				req = req.Add(p.Requests)
				n++
			}
		}
		m = law.ObserveDemand(m, epoch.Add(t), req, n)
	}
	return m
}

// observeDemand feeds the model one observation: the requests of the
// pool's pods, bound and pending.
func (l *Law) observeDemand(obs types.PoolObservation) {
	if !l.rules.Prewarm {
		return
	}
	req, n := law.ObservedDemand(obs)
	l.model = law.ObserveDemand(l.model, obs.ObservedAt, req, n)
}

// prewarmLead is how far ahead a pre-warm buys: a provisioning delay and
// the sample interval the pool may wait to see the rise.
func (l *Law) prewarmLead() time.Duration {
	return l.policy.EffectiveProvisioningDelay() + l.policy.SampleInterval.D()
}

// withPrewarm sets the decision input's stand-in pods and keeps the room
// the forecast needs.
func (l *Law) withPrewarm(in *law.DecisionInput) {
	if !l.rules.Prewarm || l.model == nil {
		return
	}
	lead := l.prewarmLead()
	in.Prewarm, in.PrewarmWhy = law.PrewarmPods(l.model, l.pool, in.Now, lead, l.obs.Nodes)
	nodes, now, m := l.obs.Nodes, in.Now, l.model
	in.KeepsHeadroom = func(remove []string) (bool, string) { return law.ForecastKeeps(m, now, lead, nodes, remove) }
}

// prewarmed records a scale-up bought (partly) on forecast.
func (l *Law) prewarmed(now time.Time, d law.Decision) {
	if d.Prewarm == 0 {
		return
	}
	l.prewarmStats.ScaleUps++
	l.prewarmStats.Pods += d.Prewarm
	law.RecordPrewarm(l.model, now, now.Add(l.prewarmLead()), d.Prewarm)
}

// Days joins day-long traces into one history, day k shifted by k days
// (a pod of one day may live into the next).
func Days(days ...Trace) Trace {
	var out Trace
	for k, d := range days {
		if k == 0 {
			out.Name = d.Name
		}
		for _, p := range d.Pods {
			p.Name = fmt.Sprintf("d%d-%s", k, p.Name)
			shift := time.Duration(k) * 24 * time.Hour
			p.Arrive, p.Depart = p.Arrive+shift, p.Depart+shift
			out.Pods = append(out.Pods, p)
		}
	}
	slices.SortStableFunc(out.Pods, func(a, b Pod) int { return int(a.Arrive - b.Arrive) })
	return out
}

// PrewarmHistory is the synthetic traces' history for a pre-warm: two
// earlier days of each trace (other seeds), trace by trace.
func PrewarmHistory(seed uint64) []Trace {
	a, b := SyntheticTraces(seed+100), SyntheticTraces(seed+200)
	out := make([]Trace, len(a))
	for i := range a {
		out[i] = Days(a[i], b[i])
	}
	return out
}
