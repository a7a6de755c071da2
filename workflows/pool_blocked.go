package workflows

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/law"
)

// An idle node the pool keeps says why (law.Rules.RetryBlocked): the
// status query's drainBlocked, the REASON line, the Web UI's details and
// one DisruptionBlocked Event on the node per reason.

// maxRefusalText bounds the reason a failed drain leaves in the state.
const maxRefusalText = 512

// maxRetrySamples caps the backoff of a refused drain: a blocker that goes
// (the PodDisruptionBudget allows a disruption again) is noticed within
// this many sample intervals.
const maxRetrySamples = 4

// keptIdle is why an idle node stays: the rule or blocker (naming the
// pod where there is one) and, when known, until when.
type keptIdle struct {
	why   string
	until time.Time
	// retry: until is when the pool drains it again.
	retry bool
}

func (k keptIdle) String() string {
	switch {
	case k.until.IsZero():
		return k.why
	case k.retry:
		return fmt.Sprintf("%s; drained again after %s", k.why, k.until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s until %s", k.why, k.until.UTC().Format(time.RFC3339))
}

// keptIdleNodes are the idle nodes something keeps: a drain blocker the
// observer found, a drain that failed (a PodDisruptionBudget that allows
// nothing), or a rule of the last decision (the disruption budget or
// window, the cooldown, the floor).
func (p *pool) keptIdleNodes() map[string]keptIdle {
	s := p.state
	out := map[string]keptIdle{}
	if s.Observation == nil {
		return out
	}
	for _, n := range s.Observation.Nodes {
		_, idle := s.IdleSince[n.Name]
		until, refused := s.DrainBlocked[n.Name]
		switch {
		case idle && len(n.DrainBlockers) > 0:
			out[n.Name] = keptIdle{why: "cannot be emptied: " + strings.Join(n.DrainBlockers, "; ")}
		case refused:
			why := s.DrainRefused[n.Name]
			if why == "" {
				why = "its drain failed"
			}
			out[n.Name] = keptIdle{why: "drain refused: " + why, until: until, retry: true}
		case idle && p.last.Held[n.Name] != "":
			out[n.Name] = keptIdle{why: "kept by " + p.last.Held[n.Name]}
		}
	}
	return out
}

// drainBlockedStatus is keptIdleNodes as the status query says it.
func (p *pool) drainBlockedStatus() map[string]string {
	kept := p.keptIdleNodes()
	if len(kept) == 0 {
		return nil
	}
	out := make(map[string]string, len(kept))
	for name, k := range kept {
		out[name] = k.String()
	}
	return out
}

// keptIdleLine sums the kept nodes up in one line for REASON, "" if none.
func (p *pool) keptIdleLine() string {
	kept := p.keptIdleNodes()
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

// drainRetryAfter is how long after a failed drain of node the pool tries
// again: with RetryBlocked a backoff from one sample interval, doubling
// with each failure in a row, up to maxRetrySamples sample intervals (and
// never past the idle window); before it, the idle window.
func (p *pool) drainRetryAfter(node string) time.Duration {
	window := p.state.Policy.IdleWindow.D()
	if !p.rules.RetryBlocked {
		return window
	}
	tries := min(p.state.DrainTries[node], 20)
	p.state.DrainTries[node] = tries + 1
	sample := max(p.state.Policy.SampleInterval.D(), time.Second)
	return min(sample<<tries, sample*maxRetrySamples, max(window, time.Second))
}

// tellBlocked tells each kept node why it stays, once per reason: the
// Event is for the node's `kubectl describe`, and a reason told before is
// not told again until it changes (its times left out, so a retry or a
// moving window does not repeat it).
func (p *pool) tellBlocked(ctx workflow.Context) {
	if !p.rules.RetryBlocked {
		return
	}
	kept := p.keptIdleNodes()
	var events []connectors.ClusterEvent
	for _, name := range workflow.DeterministicKeys(kept) {
		k := kept[name]
		if p.state.BlockedTold[name] == k.why {
			continue
		}
		p.state.BlockedTold[name] = k.why
		what := "idle node"
		if _, idle := p.state.IdleSince[name]; !idle {
			what = "node" // a drifted or expired one whose drain failed
		}
		msg := fmt.Sprintf("visor: pool %s keeps this %s: %s", p.spec.Key.WorkflowID(), what, k)
		events = append(events, connectors.ClusterEvent{Kind: connectors.EventKindNode, Name: name, Type: connectors.EventWarning, Reason: connectors.EventDisruptionBlocked, Message: msg})
	}
	for name := range p.state.BlockedTold {
		if _, still := kept[name]; !still {
			delete(p.state.BlockedTold, name)
		}
	}
	p.tell(ctx, events)
}
