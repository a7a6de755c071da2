package poolcore

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/types"
)

// Every change to the pool's state from something that happened outside
// it is an Event taken in by Apply. The workflow receives the signal or
// the activity's answer and hands it here; nothing else writes the state
// from the outside.

// MaxFutureSkew is how far ahead of workflow time an input may be dated.
const MaxFutureSkew = 2 * time.Minute

// maxRepairsKept bounds the corrections log carried across runs.
const maxRepairsKept = 10

// Env is what an event is applied under: the pool, the workflow's clock
// and the rules of the run.
type Env struct {
	Pool  types.PoolKey
	Now   time.Time
	Rules Rules
}

// Rejection is an input, or a part of one, the state did not take, with
// why. Apply has already recorded it (LastRejected, Rejected); the
// workflow logs it.
type Rejection struct {
	What string
	Err  error
}

// Event is one thing the pool learned.
type Event interface {
	applyTo(s *State, env Env) []Rejection
}

// Apply takes e into the state. A bad input changes nothing but the
// rejection counts, and says why.
func (s *State) Apply(env Env, e Event) []Rejection {
	rejected := e.applyTo(s, env)
	for _, r := range rejected {
		s.Reject(r.What, r.Err, env.Now)
	}
	return rejected
}

// Reject records a refused input: the last one said in full, each kind
// counted.
func (s *State) Reject(what string, err error, now time.Time) {
	s.LastRejected = Truncate(fmt.Sprintf("%s at %s: %v", what, now.UTC().Format(time.RFC3339), err), MaxRejectionText)
	switch {
	case s.Rejected == nil:
	case len(s.Rejected) < MaxRejectionKinds:
		s.Rejected[what]++
	default:
		s.Rejected["other"]++
	}
}

func rejected(what string, err error) []Rejection { return []Rejection{{What: what, Err: err}} }

// Observed is an observation of the pool's nodes and pods: by the
// watcher's signal, or the pool's own resync.
type Observed struct {
	Observation types.PoolObservation
	// Authentic checks the signature of an observation that came by
	// signal; nil for the resync's (an activity's answer comes from a
	// worker, not from anyone who can send a signal).
	Authentic func(types.PoolObservation) error
}

func (e Observed) applyTo(s *State, env Env) []Rejection {
	obs := e.Observation
	if err := ValidateObservation(env.Pool, obs); err != nil {
		return rejected("observe", err)
	}
	if obs.ObservedAt.After(env.Now.Add(MaxFutureSkew)) {
		return rejected("observe", fmt.Errorf("observation is dated %s, more than %s ahead of the workflow's clock (%s)",
			obs.ObservedAt.UTC().Format(time.RFC3339), MaxFutureSkew, env.Now.UTC().Format(time.RFC3339)))
	}
	if e.Authentic != nil {
		if err := e.Authentic(obs); err != nil {
			return rejected("observe", err)
		}
	}
	if prev := s.Observation; prev != nil && obs.ObservedAt.Before(prev.ObservedAt) {
		return rejected("observe", fmt.Errorf("observation of %s is older than the one held (%s)", obs.ObservedAt.Format(time.RFC3339), prev.ObservedAt.Format(time.RFC3339)))
	}
	if err := obs.ValidatePendingShapes(); err != nil {
		return rejected("observe", err)
	}
	s.Fold(obs, env.Now, env.Rules)
	return nil
}

// ProviderRead is a fresh read of the pool's node groups: the truth for
// its target, its booting machines and the meter. A target that changed
// behind the pool's back is noted as a repair.
type ProviderRead struct{ View ProviderView }

func (e ProviderRead) applyTo(s *State, env Env) []Rejection {
	if s.Provider != nil && s.Provider.Target() != e.View.Target() {
		s.NoteRepair(env.Now, fmt.Sprintf("provider target is %d, the pool's last reading was %d: taking the provider's", e.View.Target(), s.Provider.Target()))
	}
	return s.adoptView(e.View)
}

// ProviderAnswer is a provider call's answer: the groups it read after
// the change, or at least the total target, which then stands until the
// next read (the old view would undercount what is booting).
type ProviderAnswer struct {
	View  *ProviderView
	Total int
}

func (e ProviderAnswer) applyTo(s *State, _ Env) []Rejection {
	if e.View != nil {
		return s.adoptView(*e.View)
	}
	s.Provider = nil
	s.TargetNodes = e.Total
	return nil
}

// adoptView replaces the pool's idea of its groups with the provider's,
// and folds its machines into what the meter bills: each from the
// creation time the provider reports to the end time it reports (or,
// when it reports none, the first read that no longer lists it).
func (s *State) adoptView(view ProviderView) []Rejection {
	s.Provider = &view
	s.TargetNodes = view.Target()
	var live, ended []metering.MachineRun
	for _, g := range view.Groups {
		size := metering.OfferingSize(meterSize(g.Size), g.CapacityType, g.Zone)
		for _, m := range g.Instances {
			live = append(live, metering.MachineRun{ID: m.ID, Size: size, Created: m.CreatedAt})
		}
		for _, m := range g.Ended {
			ended = append(ended, metering.MachineRun{ID: m.ID, Size: size, Created: m.CreatedAt, Ended: m.EndedAt})
		}
	}
	var out []Rejection
	dropped, err := s.Machines.Take(view.ReadAt, live, ended)
	if err != nil {
		out = append(out, Rejection{What: "meter", Err: fmt.Errorf("provider read: %w", err)})
	}
	if dropped > 0 {
		out = append(out, Rejection{What: "meter", Err: fmt.Errorf("more than %d ended machines await billing: the %d that ended first were dropped", metering.MaxEndedSpans, dropped)})
	}
	return out
}

func meterSize(size string) string {
	if size == "" {
		return "unknown"
	}
	return size
}

// NoteRepair logs a correction made from provider truth.
func (s *State) NoteRepair(now time.Time, what string) {
	s.Repairs = append(s.Repairs, now.UTC().Format(time.RFC3339)+" "+what)
	if len(s.Repairs) > maxRepairsKept {
		s.Repairs = s.Repairs[len(s.Repairs)-maxRepairsKept:]
	}
}

// GateChanged is the cluster's phase, reachability and billing tier as
// its workflow tells them. An older gate than the one held changes
// nothing; a tier change is recorded as a decision.
type GateChanged struct{ Gate contract.ClusterGate }

func (e GateChanged) applyTo(s *State, env Env) []Rejection {
	g := e.Gate
	if g.Since.After(env.Now.Add(MaxFutureSkew)) {
		return rejected("cluster-gate", fmt.Errorf("gate is dated %s, more than %s ahead of the workflow's clock", g.Since.UTC().Format(time.RFC3339), MaxFutureSkew))
	}
	if g.Since.Before(s.Gate.Since) {
		return nil
	}
	s.Gate = g
	return s.noteTier(env)
}

// noteTier records the billing tier the gate says from now on.
func (s *State) noteTier(env Env) []Rejection {
	t := &s.Tiers
	known, from := len(t.Changes) > 0, t.Current()
	to := s.Gate.Tier.OrManaged()
	changed, err := t.Record(to, env.Now)
	if err != nil {
		return rejected("cluster-gate", err)
	}
	if !changed || !known {
		return nil
	}
	s.Seq++
	s.Record(contract.DecisionRecord{
		Seq: s.Seq, At: env.Now, Action: "tier-change",
		Reason:  fmt.Sprintf("cluster %s is billed as %s (was %s)", env.Pool.Cluster, to, from),
		Outcome: fmt.Sprintf("hours from %s are metered as %s; the hour in progress stays %s", env.Now.UTC().Truncate(time.Hour).Add(time.Hour).Format("2006-01-02T15"), to, t.ForHour(env.Now)),
	})
	return nil
}

// NodeRemoved is a node the pool drained and deleted: every clock and
// blocker of it goes, and the last observation no longer counts it.
type NodeRemoved struct{ Node string }

func (e NodeRemoved) applyTo(s *State, _ Env) []Rejection {
	for _, m := range []map[string]time.Time{s.DrainBlocked, s.IdleSince, s.UnderusedSince, s.DueSince} {
		delete(m, e.Node)
	}
	delete(s.DrainRefused, e.Node)
	delete(s.DrainTries, e.Node)
	s.ForgetNode(e.Node)
	return nil
}

// ForgetNode drops a node from the last observation: it is gone at the
// provider, and an observation sampled before must not count it.
func (s *State) ForgetNode(name string) {
	obs := s.Observation
	if obs == nil {
		return
	}
	kept := obs.Nodes[:0:0]
	for _, n := range obs.Nodes {
		if n.Name != name {
			kept = append(kept, n)
		}
	}
	cp := *obs
	cp.Nodes = kept
	s.Observation = &cp
}

// RemovalFailed is a drain or delete that failed: the node is tried again
// after a backoff (Rules.RetryBlocked) or the idle window, and says why.
type RemovalFailed struct {
	Node string
	// Why is the refusal as the node is told it (RetryBlocked only).
	Why string
}

func (e RemovalFailed) applyTo(s *State, env Env) []Rejection {
	s.DrainBlocked[e.Node] = env.Now.Add(s.DrainRetryAfter(e.Node, env.Rules))
	if env.Rules.RetryBlocked {
		s.DrainRefused[e.Node] = Truncate(e.Why, MaxRefusalText)
	}
	return nil
}
