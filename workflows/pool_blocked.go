package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/connectors"
)

// An idle node the pool keeps says why (law.Rules.RetryBlocked): the
// status query's drainBlocked, the REASON line, the Web UI's details and
// one DisruptionBlocked Event on the node per reason.

// tellBlocked tells each kept node why it stays, once per reason: the
// Event is for the node's `kubectl describe`, and a reason told before is
// not told again until it changes (its times left out, so a retry or a
// moving window does not repeat it).
func (p *pool) tellBlocked(ctx workflow.Context) {
	if !p.rules.RetryBlocked {
		return
	}
	kept := p.state.KeptIdleNodes(p.last.Held)
	var events []connectors.ClusterEvent
	for _, name := range workflow.DeterministicKeys(kept) {
		k := kept[name]
		if p.state.BlockedTold[name] == k.Why {
			continue
		}
		p.state.BlockedTold[name] = k.Why
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
