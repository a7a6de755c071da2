package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// An observation reaches the pool by an observe signal (the watcher's) or
// by the pool's own resync; either way it passes applyObservation's checks
// and then PoolState.fold, in this file, takes it into the state.

// applyObservation folds a new observation into the durable state. A bad or
// out-of-order one changes nothing and is recorded as rejected.
//
// fromActivity marks the pool's own resync: an activity's result comes from
// a worker, not from a signal anyone could send, and needs no signature.
func (p *pool) applyObservation(ctx workflow.Context, obs types.PoolObservation, fromActivity bool) {
	if err := poolcore.ValidateObservation(p.spec.Key, obs); err != nil {
		p.reject(ctx, "observe", err)
		return
	}
	now := workflow.Now(ctx)
	if obs.ObservedAt.After(now.Add(maxFutureSkew)) {
		p.reject(ctx, "observe", fmt.Errorf("observation is dated %s, more than %s ahead of the workflow's clock (%s)",
			obs.ObservedAt.UTC().Format(time.RFC3339), maxFutureSkew, now.UTC().Format(time.RFC3339)))
		return
	}
	if !fromActivity {
		if err := p.auth.systemInput(p.spec.Key.WorkflowID(), contract.SignalObserve, obs, obs.Auth, now); err != nil {
			p.reject(ctx, "observe", err)
			return
		}
	}
	if prev := p.state.Observation; prev != nil && obs.ObservedAt.Before(prev.ObservedAt) {
		p.reject(ctx, "observe", fmt.Errorf("observation of %s is older than the one held (%s)", obs.ObservedAt.Format(time.RFC3339), prev.ObservedAt.Format(time.RFC3339)))
		return
	}
	if err := obs.ValidatePendingShapes(); err != nil {
		p.reject(ctx, "observe", err)
		return
	}
	p.state.Fold(obs, now, p.rules)
}
