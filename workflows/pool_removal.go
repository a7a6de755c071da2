package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// removal drains and deletes nodes: a scale-down, and the removals the
// other executors (replacement, renewal) make.
type removal struct{ *pool }

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
func (p removal) removeAtOnce(ctx workflow.Context, seq int64, nodes []string, requestedBy string) (removed, failures []string) {
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

func (p removal) startDrain(ctx workflow.Context, node string) *removalStep {
	p.removal.InHand[node] = "drain since " + workflow.Now(ctx).UTC().Format(time.RFC3339)
	return &removalStep{node: node, call: p.drainCall(ctx, node)}
}

// finishStep takes a step's result: a drained node's delete is started in
// the same step value, a deleted node is written off.
func (p removal) finishStep(ctx workflow.Context, seq int64, step *removalStep) error {
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
		return appErr.Message()
	}
	return err.Error()
}

// removalFailed keeps a node that would not drain or delete for a later
// try and says why.
func (p removal) removalFailed(ctx workflow.Context, node string, err error) string {
	p.removal.Failed++
	p.apply(ctx, poolcore.RemovalFailed{Node: node, Why: refusal(err)})
	if !p.rules.RetryBlocked {
		// Told once per reason with the other blockers (tellBlocked) under
		// the rule; before it, once per failure.
		teller{p.pool}.tellDrainBlocked(ctx, node, err, p.state.DrainBlocked[node])
	}
	return fmt.Sprintf("%s: %v", node, err)
}

// scaleDown drains and deletes the named nodes, removalsAtOnce at a time
// (one at a time in a run begun before parallel-removal). A node that
// will not drain is uncordoned by the drain and left for later.
func (p removal) scaleDown(ctx workflow.Context, reason string, nodes []string, requestedBy string) {
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionScaleDown), Reason: reason, RequestedBy: requestedBy}
	p.removal = &contract.Removal{Seq: seq, Reason: reason, Since: rec.At, Nodes: len(nodes), InHand: map[string]string{}}
	defer func() { p.removal = nil }()
	var failures []string
	decided := nodes
	if p.rules.ParallelRemoval {
		rec.Removed, failures = p.removeAtOnce(ctx, seq, nodes, requestedBy)
		nodes = nil
	}
	for i, node := range nodes {
		if i > 0 && requestedBy == "" {
			if why := p.scaleDownFrozen(ctx); why != "" {
				// The law decided this under a gate that has frozen since.
				failures = append(failures, "stopped: "+why)
				break
			}
		}
		p.removal.InHand[node] = "drain since " + workflow.Now(ctx).UTC().Format(time.RFC3339)
		err := p.removeNode(ctx, seq, node)
		delete(p.removal.InHand, node)
		if err != nil {
			failures = append(failures, p.removalFailed(ctx, node, err))
			continue
		}
		rec.Removed = append(rec.Removed, node)
		p.apply(ctx, poolcore.NodeRemoved{Node: node})
		p.removal.Done++
	}
	if len(rec.Removed) > 0 {
		p.state.LastScaleDown = workflow.Now(ctx)
		p.state.LapseReplacement(workflow.Now(ctx), rec.Removed, p.rules)
	}
	rec.Outcome = fmt.Sprintf("removed %d of %d", len(rec.Removed), len(decided))
	if len(failures) > 0 {
		rec.Outcome += "; " + strings.Join(failures, "; ")
	}
	p.state.Record(rec)
}

func (p removal) removeNode(ctx workflow.Context, seq int64, node string) error {
	var dr connectors.DrainResult
	if err := p.awaitCall(ctx, p.drainCall(ctx, node), &dr); err != nil {
		return err
	}
	var res activities.DeleteResult
	if err := p.awaitCall(ctx, p.deleteCall(ctx, seq, node), &res); err != nil {
		return err
	}
	p.deleted(ctx, node, res)
	return nil
}

// drainCall starts a node's drain; deleteCall its delete at the provider,
// keyed by the decision.
func (p removal) drainCall(ctx workflow.Context, node string) workflow.Future {
	drain := activities.DrainInput{Key: p.spec.Key, Node: node, Timeout: p.state.Policy.DrainTimeout}
	return workflow.ExecuteActivity(p.drainCtx(ctx, "drain "+node), a.DrainNode, drain)
}

func (p removal) deleteCall(ctx workflow.Context, seq int64, node string) workflow.Future {
	del := activities.DeleteInput{Key: p.spec.Key, Node: node, IdempotencyKey: p.idempotencyKey(seq, "delete-"+node)}
	return workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, "delete node "+node), a.DeleteNode, del)
}

// deleted takes a delete's answer: the node is removed, and the provider's
// view read after it (or its total target) stands.
func (p removal) deleted(ctx workflow.Context, node string, res activities.DeleteResult) {
	p.state.Removed[node] = workflow.Now(ctx)
	p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
}
