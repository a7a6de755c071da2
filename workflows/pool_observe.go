package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// An observation reaches the pool by an observe signal (the watcher's) or
// by the pool's own resync; either way it passes applyObservation's checks
// and then PoolState.fold, in this file, takes it into the state.

// applyObservation takes a new observation into the state; a bad or
// out-of-order one changes nothing and is recorded as rejected.
//
// fromActivity marks the pool's own resync: an activity's result comes from
// a worker, not from a signal anyone could send, and needs no signature.
func (p *pool) applyObservation(ctx workflow.Context, obs types.PoolObservation, fromActivity bool) {
	e := poolcore.Observed{Observation: obs}
	if !fromActivity {
		e.Authentic = func(obs types.PoolObservation) error {
			return p.auth.systemInput(p.spec.Key.WorkflowID(), contract.SignalObserve, obs, obs.Auth, workflow.Now(ctx))
		}
	}
	p.apply(ctx, e)
}
