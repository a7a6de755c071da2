package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// removalsAtOnce bounds the nodes one scale-down drains and deletes at the
// same time, under the disruption budget's own cap; it spares the
// provider's API a burst of hundreds of calls. One at a time, a pool of
// 500 empty nodes took minutes to come down, and one slow drain held up
// every node behind it.
const removalsAtOnce = 10

// removalStep is one node of a scale-down: its drain, then its delete.
type removalStep struct {
	node   string
	delete bool
	call   workflow.Future
}

// removeAtOnce drains and deletes nodes, as many at a time as the
// disruption budget allows up to removalsAtOnce, taking
// observations and gate changes while it waits. A gate that freezes
// scale-down stops new nodes from being started (those in hand finish).
// It returns the nodes removed and, for the others, why not.
func (p *pool) removeAtOnce(ctx workflow.Context, seq int64, nodes []string, requestedBy string) (removed, failures []string) {
	var inHand []*removalStep
	next, stopped := 0, ""
	atOnce := min(max(law.MaxDraining(p.state.Policy, p.state.NodeCount()), 1), removalsAtOnce)
	for {
		for stopped == "" && next < len(nodes) && len(inHand) < atOnce {
			if next > 0 && p.shouldContinueAsNew(ctx) {
				// Every observation that arrives meanwhile lengthens this
				// run's history, and the server ends a run whose history
				// outgrows its limit: the next run decides the rest.
				stopped = "the run's history is long; the rest are decided again after it continues as new"
				failures = append(failures, fmt.Sprintf("stopped after %d of %d: %s", next, len(nodes), stopped))
				break
			}
			if next > 0 && requestedBy == "" {
				if stopped = p.scaleDownFrozen(ctx); stopped != "" {
					// The law decided this under a gate that has frozen since.
					failures = append(failures, "stopped: "+stopped)
					break
				}
			}
			inHand = append(inHand, p.startDrain(ctx, nodes[next]))
			next++
		}
		if len(inHand) == 0 {
			return removed, failures
		}
		var done *removalStep
		sel := workflow.NewSelector(ctx)
		for _, step := range inHand {
			sel.AddFuture(step.call, func(workflow.Future) { done = step })
		}
		sel.AddReceive(p.observe, func(workflow.ReceiveChannel, bool) {})
		sel.AddReceive(p.gate, func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		p.takeObservations(ctx)
		p.takeGates(ctx)
		if done == nil {
			continue
		}
		drained := !done.delete
		err := p.finishStep(ctx, seq, done)
		switch {
		case err != nil:
			failures = append(failures, p.removalFailed(ctx, done.node, err))
		case !drained:
			removed = append(removed, done.node)
			p.apply(ctx, poolcore.NodeRemoved{Node: done.node})
			p.removal.Done++
		}
		kept := inHand[:0]
		for _, step := range inHand {
			if step != done || (err == nil && drained) {
				kept = append(kept, step)
			}
		}
		inHand = kept
	}
}

func (p *pool) startDrain(ctx workflow.Context, node string) *removalStep {
	p.removal.InHand[node] = "drain since " + workflow.Now(ctx).UTC().Format(time.RFC3339)
	return &removalStep{node: node, call: p.drainCall(ctx, node)}
}

// finishStep takes a step's result: a drained node's delete is started in
// the same step value, a deleted node is written off.
func (p *pool) finishStep(ctx workflow.Context, seq int64, step *removalStep) error {
	if !step.delete {
		var dr connectors.DrainResult
		if err := step.call.Get(ctx, &dr); err != nil {
			delete(p.removal.InHand, step.node)
			return err
		}
		p.removal.InHand[step.node] = "delete since " + workflow.Now(ctx).UTC().Format(time.RFC3339)
		step.delete, step.call = true, p.deleteCall(ctx, seq, step.node)
		return nil
	}
	delete(p.removal.InHand, step.node)
	var res activities.DeleteResult
	if err := step.call.Get(ctx, &res); err != nil {
		return err
	}
	// Deletes answer in any order: a view read before another delete
	// ended would bring that node back into the count and the meter.
	if res.View != nil && p.state.Provider != nil && res.View.ReadAt.Before(p.state.Provider.ReadAt) {
		p.state.Removed[step.node] = workflow.Now(ctx)
		return nil
	}
	p.deleted(ctx, step.node, res)
	return nil
}

// refusal is why a drain or delete failed, as told to the node: the
// activity's own message, without the attempt's event IDs that would make
// each retry a new reason and a new Event.
func refusal(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Message() != "" {
		return poolcore.Truncate(appErr.Message(), poolcore.MaxRefusalText)
	}
	return poolcore.Truncate(err.Error(), poolcore.MaxRefusalText)
}

// removalFailed keeps a node that would not drain or delete for a later
// try and says why.
func (p *pool) removalFailed(ctx workflow.Context, node string, err error) string {
	p.removal.Failed++
	p.apply(ctx, poolcore.RemovalFailed{Node: node, Why: refusal(err)})
	if !p.rules.RetryBlocked {
		// Told once per reason with the other blockers (tellBlocked) under
		// the rule; before it, once per failure.
		p.tellDrainBlocked(ctx, node, err, p.state.DrainBlocked[node])
	}
	return fmt.Sprintf("%s: %v", node, err)
}
