package poolcore

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/law"
)

// An idle node the pool keeps says why (law.Rules.RetryBlocked): the
// status query's drainBlocked, the REASON line, the Web UI's details and
// one DisruptionBlocked Event on the node per reason.

// MaxRefusalText bounds the reason a failed drain leaves in the state.
const MaxRefusalText = 512

// MaxRetrySamples caps the backoff of a refused drain: a blocker that goes
// (the PodDisruptionBudget allows a disruption again) is noticed within
// this many sample intervals.
const MaxRetrySamples = 4

// KeptIdle is why an idle node stays: the rule or blocker (naming the
// pod where there is one) and, when known, until when.
type KeptIdle struct {
	Why   string
	Until time.Time
	// Retry: Until is when the pool drains it again.
	Retry bool
}

func (k KeptIdle) String() string {
	switch {
	case k.Until.IsZero():
		return k.Why
	case k.Retry:
		return fmt.Sprintf("%s; drained again after %s", k.Why, k.Until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s until %s", k.Why, k.Until.UTC().Format(time.RFC3339))
}

// KeptIdleNodes are the idle nodes something keeps: a drain blocker the
// observer found, a drain that failed (a PodDisruptionBudget that allows
// nothing), or a rule of the last decision (the disruption budget or
// window, the cooldown, the floor).
//
// held is the last decision's Held: the rule that kept each idle node.
func (s *State) KeptIdleNodes(held map[string]string) map[string]KeptIdle {
	out := map[string]KeptIdle{}
	if s.Observation == nil {
		return out
	}
	for _, n := range s.Observation.Nodes {
		_, idle := s.IdleSince[n.Name]
		until, refused := s.DrainBlocked[n.Name]
		switch {
		case idle && len(n.DrainBlockers) > 0:
			out[n.Name] = KeptIdle{Why: "cannot be emptied: " + strings.Join(n.DrainBlockers, "; ")}
		case refused:
			why := s.DrainRefused[n.Name]
			if why == "" {
				why = "its drain failed"
			}
			out[n.Name] = KeptIdle{Why: "drain refused: " + why, Until: until, Retry: true}
		case idle && held[n.Name] != "":
			out[n.Name] = KeptIdle{Why: "kept by " + held[n.Name]}
		}
	}
	return out
}

// DrainBlockedStatus is KeptIdleNodes as the status query says it.
func (s *State) DrainBlockedStatus(held map[string]string) map[string]string {
	kept := s.KeptIdleNodes(held)
	if len(kept) == 0 {
		return nil
	}
	out := make(map[string]string, len(kept))
	for name, k := range kept {
		out[name] = k.String()
	}
	return out
}

// KeptIdleLine sums the kept nodes up in one line for REASON, "" if none.
func (s *State) KeptIdleLine(held map[string]string) string {
	kept := s.KeptIdleNodes(held)
	if len(kept) == 0 {
		return ""
	}
	names := make([]string, 0, len(kept))
	for name := range kept {
		names = append(names, name)
	}
	sort.Strings(names)
	return fmt.Sprintf("%s kept idle; %s %s", law.Plural(len(names), "node"), names[0], kept[names[0]])
}

// DrainRetryAfter is how long after a failed drain of node the pool tries
// again: with RetryBlocked a backoff from one sample interval, doubling
// with each failure in a row, up to MaxRetrySamples sample intervals (and
// never past the idle window); before it, the idle window.
func (s *State) DrainRetryAfter(node string, rules Rules) time.Duration {
	window := s.Policy.IdleWindow.D()
	if !rules.RetryBlocked {
		return window
	}
	tries := min(s.DrainTries[node], 20)
	s.DrainTries[node] = tries + 1
	sample := max(s.Policy.SampleInterval.D(), time.Second)
	return min(sample<<tries, sample*MaxRetrySamples, max(window, time.Second))
}
