package poolcore

import (
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// Decided is what Decide found: the law's decision, and what the status
// and the Web UI say of it.
type Decided struct {
	Decision law.Decision
	// At is the workflow time it was decided at.
	At time.Time
	// AddedWithoutProgress is the runaway guard's count then.
	AddedWithoutProgress int
	// Capacity sums up the capacity policies in force then.
	Capacity string
	// Due are the nodes drifted or expired then.
	Due []law.Due
}

// Decide runs the pure control law over the state. It keeps the
// lifecycle's clocks (each group's template, since when each node is due)
// in the state as it reads them.
func (s *State) Decide(pool types.PoolKey, rules Rules, now time.Time) Decided {
	out := Decided{At: now, AddedWithoutProgress: s.AddedWithoutProgress(now)}
	lc, due := s.lifecycleInput(now, rules)
	out.Due = due
	in := law.DecisionInput{
		Policy:        s.Policy,
		Observation:   s.Observation,
		Now:           now,
		LastScaleUp:   s.LastScaleUp,
		LastScaleDown: s.LastScaleDown,
		IdleSince:     s.IdleSince,
		Unplaceable:   s.Unplaceable,
		DrainBlocked:  s.DrainBlocked,
		Removed:       s.Removed,
		InFlightNodes: s.InFlight(),
		Gate:          s.LawGate(),

		Machines:             s.LawMachines(),
		Leaked:               s.Leaked(),
		NotReadySince:        s.NotReadySince,
		Deferred:             s.Deferred,
		NoHelp:               s.NoHelp,
		Awaiting:             s.Awaiting(),
		AddedWithoutProgress: out.AddedWithoutProgress,
		Rules:                rules.Rules,
		UnderusedSince:       s.UnderusedSince,
		Replacing:            s.Replacing,
		SizeRoom:             s.SizeRoom,
		SizePrice:            s.SizePrice,
		SizeGPUModel:         s.SizeGPUModel,
		Lifecycle:            lc,
	}
	if len(s.Policy.Headroom) > 0 || s.Buffered() {
		s.withHeadroom(&in, pool, now)
	}
	if rules.Prewarm {
		s.withPrewarm(&in, pool, now)
	}
	if now.Before(s.HoldUntil) {
		in.HoldFloor, in.HoldUntil = s.HoldTarget, s.HoldUntil
	}
	out.Capacity = WithBuffers(law.Describe(s.Policy, now, s.NodeCount(), s.HourlyCost()).Summary(s.Policy), s.Observation)
	out.Decision = law.Decide(in)
	return out
}
