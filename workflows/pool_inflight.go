package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// An action waits on activities that may take minutes: a provider call,
// a drain, and after a worker is lost mid-call the heartbeat timeout and
// the retry. What arrives meanwhile is taken in at once:
// observations, so the status and the meter stay
// current, and gate changes, so a gate that freezes scale-down stops a
// scale-down between two nodes. Force-scale and policy changes wait for
// the loop: they are decisions, and the pool carries out one at a time.

// awaitCall waits for one of an action's activities, taking in
// observations and gate changes while it runs.
func (p *pool) awaitCall(ctx workflow.Context, call workflow.Future, out any) error {
	for !call.IsReady() {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(call, func(workflow.Future) {})
		sel.AddReceive(p.observe, func(workflow.ReceiveChannel, bool) {})
		sel.AddReceive(p.gate, func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		p.takeObservations(ctx)
		p.takeGates(ctx)
	}
	return call.Get(ctx, out)
}

// scaleDownFrozen says why the gate, as it stands now, forbids going on
// with the law's scale-down ("" when it allows it). A gate signal that
// must be read from the cluster workflow is read first.
func (p *pool) scaleDownFrozen(ctx workflow.Context) string {
	if p.gateDirty {
		p.readGate(ctx)
	}
	if g := p.state.LawGate(); !g.AllowScaleDown {
		return g.Reason
	}
	return ""
}
