package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// teller records Kubernetes Events on the pods and nodes a decision
// concerns, each told once.
type teller struct{ *pool }

// The pool says why on the objects themselves, where `kubectl describe`
// shows it: a pod it bought for, a pod it cannot help, a node it could not
// drain. Events are told without waiting: they are for people, never a
// reason to hold a decision, and a lost one is not retried for long.

// tell records events on the pool's pods and nodes.
func (p teller) tell(ctx workflow.Context, events []connectors.ClusterEvent) {
	if len(events) == 0 {
		return
	}
	events = events[:min(len(events), connectors.MaxEventsPerCall)]
	actx := p.activityCtx(ctx, quickActivity, "record "+law.Plural(len(events), "event"))
	opts := workflow.GetActivityOptions(actx)
	opts.RetryPolicy.MaximumAttempts = 3
	opts.ScheduleToCloseTimeout = time.Minute
	workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), a.RecordEvents, activities.EventsInput{Key: p.spec.Key, Events: events})
}

// tellBought tells each pod a purchase was for which nodes it bought.
func (p teller) tellBought(ctx workflow.Context, seq int64, plan activities.PlanResult, pods []types.PendingPod) {
	msg := fmt.Sprintf("visor: buying %d × %s for this pod, pool %s, decision #%d", plan.NewNodes, plan.Size, p.spec.Key.WorkflowID(), seq)
	var events []connectors.ClusterEvent
	for _, pod := range boughtFor(plan, pods) {
		// A shape's unlisted pods have no name of their own to tell.
		if pod.Count > 0 {
			continue
		}
		events = append(events, podEvent(pod.Key(), connectors.EventNormal, connectors.EventTriggeredScaleUp, msg))
	}
	p.tell(ctx, events)
}

// tellUnplaceable tells pods newly found to fit no size the pool may buy
// why, and what would fix it; a pod told before is not told again.
func (p teller) tellUnplaceable(ctx workflow.Context, fresh []activities.UnplaceablePod) {
	var events []connectors.ClusterEvent
	for _, u := range fresh {
		msg := fmt.Sprintf("visor: pool %s buys no node for this pod: %s", p.spec.Key.WorkflowID(), u.Reason)
		events = append(events, podEvent(u.Pod, connectors.EventWarning, connectors.EventNotTriggerScaleUp, msg))
	}
	p.tell(ctx, events)
}

// tellDrainBlocked tells a node the pool wanted gone why it stays.
func (p teller) tellDrainBlocked(ctx workflow.Context, node string, err error, until time.Time) {
	msg := fmt.Sprintf("visor: pool %s could not drain this node: %v; it tries again after %s", p.spec.Key.WorkflowID(), err, until.UTC().Format(time.RFC3339))
	p.tell(ctx, []connectors.ClusterEvent{{Kind: connectors.EventKindNode, Name: node, Type: connectors.EventWarning, Reason: connectors.EventDisruptionBlocked, Message: msg}})
}

// podEvent is an event on the pod a "namespace/name" key names.
func podEvent(key, typ, reason, msg string) connectors.ClusterEvent {
	ns, name, _ := strings.Cut(key, "/")
	return connectors.ClusterEvent{Kind: connectors.EventKindPod, Namespace: ns, Name: name, Type: typ, Reason: reason, Message: msg}
}

// tellBlocked tells each kept node why it stays, once per reason: the
// Event is for the node's `kubectl describe`, and a reason told before is
// not told again until it changes (its times left out, so a retry or a
// moving window does not repeat it).
func (p teller) tellBlocked(ctx workflow.Context) {
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
