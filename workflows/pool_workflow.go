package workflows

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// maxEventsPerRun bounds a run's history even when the server does not
// suggest Continue-As-New: a pool lives for years.
const maxEventsPerRun = 4000

// pool is one run of the pool workflow: its spec, durable state and the
// channels its messages arrive on.
type pool struct {
	spec    contract.PoolSpec
	state   *PoolState
	observe workflow.ReceiveChannel
	force   workflow.ReceiveChannel
	gate    workflow.ReceiveChannel
	// wake is poked by update handlers so the loop re-decides at once.
	wake workflow.Channel
	// timer is the one pending wake-up timer and the moment it fires.
	timer       workflow.Future
	timerAt     time.Time
	timerCancel workflow.CancelFunc
	// policyChanged: the cluster must hear the new idle thresholds.
	policyChanged bool
	// lastSA and lastDetails remember what the Web UI was told, to upsert
	// only on change; last is the decision they were made from.
	lastSA      saSnapshot
	lastDetails string
	lastMemo    memoSnapshot
	last        law.Decision
	metrics     poolMetrics
	// rules are the rules this run decides and buys with (readRules).
	rules poolcore.Rules
	// decided is what the last decision found, for the status query.
	decided poolcore.Decided
	// auth verifies signed signals with the worker's trust; gateDirty: a
	// gate signal arrived and the gate is read from the cluster workflow,
	// not taken from it.
	auth      authority
	gateDirty bool
	// incarnation names this life of the pool in its idempotency keys.
	incarnation string
	// meterRetryAt: a provider read the meter needed failed; the next
	// try is not before it (pool_meter.go).
	meterRetryAt time.Time
	// notices reads interruption notices (pool_interruptions.go).
	notices noticeReader
	// removal is the scale-down under way, for the status query.
	removal *contract.Removal
}

// maxActionsPerWake bounds how many decisions one wake-up carries out in a
// row: enough for repair, then scale-up, then the size it deferred.
const maxActionsPerWake = 3

// PoolWorkflow is one long-lived pool: it observes, decides and acts until
// deregistered.
func PoolWorkflow(ctx workflow.Context, in PoolInput) error {
	if err := in.Spec.Validate(); err != nil {
		return fmt.Errorf("invalid pool spec: %w", err)
	}
	// A pool acts only under its own ID: the frontend lets a tenant start
	// only its own org's pool IDs, and this keeps such a start from
	// carrying another pool's spec (and so moving that pool's nodes).
	info := workflow.GetInfo(ctx)
	if id := info.WorkflowExecution.ID; strings.HasPrefix(id, "pool/") && id != in.Spec.Key.WorkflowID() {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("pool spec is for %s, but this workflow is %s: a pool runs only under its own ID", in.Spec.Key.WorkflowID(), id), "InvalidPoolSpec", nil)
	}
	// Another org's tenant queue would have that org's own worker buy,
	// drain and delete for this pool in that org's cloud account.
	if err := in.Spec.CheckProviderQueue(); err != nil {
		return temporal.NewNonRetryableApplicationError("invalid pool spec: "+err.Error(), "InvalidPoolSpec", nil)
	}
	// A pool's state comes only from its own previous run. A start that
	// carries one (a tenant may start its own pool with any input) could
	// otherwise skip metering with a cursor in the future, take a policy
	// that never passed set-policy's checks, or clear its nonces.
	carried := in.State != nil && info.ContinuedExecutionRunID == ""
	if carried {
		workflow.GetLogger(ctx).Warn("pool start carried state without a previous run: ignored, starting from the spec", "pool", in.Spec.Key.WorkflowID())
		in.State = nil
	}
	p := &pool{
		spec:    in.Spec,
		state:   in.State,
		observe: workflow.GetSignalChannel(ctx, contract.SignalObserve),
		force:   workflow.GetSignalChannel(ctx, contract.SignalForceScale),
		gate:    workflow.GetSignalChannel(ctx, contract.SignalClusterGate),
		wake:    workflow.NewBufferedChannel(ctx, 64),
	}
	if p.state == nil {
		p.state = poolcore.New(in.Spec)
	}
	p.state.EnsureMaps()
	if carried {
		p.state.Record(contract.DecisionRecord{Seq: p.state.NextSeq(), At: workflow.Now(ctx), Action: "start",
			Reason:  "the start carried a pool state, but no earlier run of this pool handed it over",
			Outcome: "carried state ignored: started from the spec"})
	}
	if p.state.MeterCursor.IsZero() {
		p.state.MeterCursor = workflow.Now(ctx).UTC().Truncate(time.Hour)
	}
	if err := (handlers{p}).registerHandlers(ctx); err != nil {
		return err
	}
	p.rules = readRules(ctx)
	p.incarnation = incarnationOf(cmp.Or(info.FirstRunID, info.WorkflowExecution.RunID))
	p.loadTrust(ctx)
	p.announce(ctx, false)
	return p.run(ctx)
}

func (p *pool) run(ctx workflow.Context) error {
	for {
		p.drainMessages(ctx)
		if p.auth.refresh {
			p.loadTrust(ctx)
		}
		if p.gateDirty {
			p.readGate(ctx)
		}
		if p.state.Deregistering {
			return p.deregister(ctx)
		}
		if p.state.NeedsResync(workflow.Now(ctx)) {
			p.resync(ctx)
		}
		if p.policyChanged {
			p.policyChanged = false
			p.announce(ctx, false)
		}
		billing{p}.meter(ctx)
		p.state.LapseReplacement(workflow.Now(ctx), nil, p.rules)
		interruptions{p}.takeInterruptions(ctx)
		d := p.decide(workflow.Now(ctx))
		if !p.state.Paused && p.act(ctx, d) {
			// Acting changed the state: decide again for what comes next,
			// and carry that out too rather than sleep on it.
			d = p.decide(workflow.Now(ctx))
			for i := 1; i < maxActionsPerWake && d.Action != law.ActionNone && !p.mustContinueAsNew(ctx) && p.act(ctx, d); i++ {
				d = p.decide(workflow.Now(ctx))
			}
		}
		p.last = d
		teller{p}.tellBlocked(ctx) // pool_events.go
		publisher{p}.publish(ctx)
		if p.shouldContinueAsNew(ctx) {
			return p.continueAsNew(ctx)
		}
		p.waitForWork(ctx)
	}
}

// decide runs the pure control law over the current state
// (poolcore.State.Decide) and keeps what it found for the status.
func (p *pool) decide(now time.Time) law.Decision {
	p.decided = p.state.Decide(p.spec.Key, p.rules, now)
	return p.decided.Decision
}

// act carries out a manual target if one is waiting, else the decision d.
// It reports whether it changed anything.
func (p *pool) act(ctx workflow.Context, d law.Decision) bool {
	if m := p.state.ManualTarget; m != nil {
		p.state.ManualTarget = nil
		p.scaleTo(ctx, *m)
		return true
	}
	resynced := false
	stale := 2 * p.state.Policy.SampleInterval.D()
	if p.rules.FreshScaleDown {
		stale = law.FreshScaleDownAge
	}
	if d.Action == law.ActionScaleDown && p.observationAge(ctx) > stale {
		// Look again before removing anything: destructive steps act on
		// fresh data only.
		p.resync(ctx)
		d, resynced = p.decide(workflow.Now(ctx)), true
	} else if d.Action != law.ActionNone {
		// Every action that adds or removes capacity starts from what the
		// provider says now, not from the pool's last look.
		p.readProvider(ctx)
		d, resynced = p.decide(workflow.Now(ctx)), true
	}
	switch d.Action {
	case law.ActionScaleUp:
		purchase{p}.scaleUp(ctx, d)
	case law.ActionScaleDown:
		removal{p}.scaleDown(ctx, d.Reason, d.RemoveNodes, "")
	case law.ActionRepair:
		repairer{p}.repair(ctx, d)
	case law.ActionReplace:
		replacer{p}.replace(ctx, d)
	case law.ActionDisrupt:
		renewal{p}.disrupt(ctx, d)
	default:
		return resynced
	}
	return true
}

func (p *pool) observationAge(ctx workflow.Context) time.Duration {
	if p.state.Observation == nil {
		return time.Duration(1<<62 - 1)
	}
	return workflow.Now(ctx).Sub(p.state.Observation.ObservedAt)
}

// waitForWork blocks until a message arrives or the next moment that
// matters. The timer is kept across wake-ups while its deadline holds, so an
// idle pool records almost nothing.
func (p *pool) waitForWork(ctx workflow.Context) {
	at, why := p.nextWake(workflow.Now(ctx))
	if p.timer == nil || !p.timerAt.Equal(at) {
		p.cancelTimer()
		tctx, cancel := workflow.WithCancel(ctx)
		p.timer = workflow.NewTimerWithOptions(tctx, at.Sub(workflow.Now(ctx)), workflow.TimerOptions{Summary: why})
		p.timerAt, p.timerCancel = at, cancel
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(p.observe, func(workflow.ReceiveChannel, bool) {})
	sel.AddReceive(p.force, func(workflow.ReceiveChannel, bool) {})
	sel.AddReceive(p.gate, func(workflow.ReceiveChannel, bool) {})
	sel.AddReceive(p.wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.AddFuture(p.timer, func(workflow.Future) { p.timer, p.timerAt = nil, time.Time{} })
	sel.Select(ctx)
}

func (p *pool) cancelTimer() {
	if p.timerCancel != nil {
		p.timerCancel()
	}
	p.timer, p.timerCancel, p.timerAt = nil, nil, time.Time{}
}

// nextWake is the earliest of the law's wake-up, the safety resync, and the
// next metering hour.
func (p *pool) nextWake(now time.Time) (time.Time, string) {
	at := p.state.ReceivedAt.Add(p.state.ResyncInterval())
	why := "safety resync"
	if p.last.WakeAt.After(now) && p.last.WakeAt.Before(at) && !p.state.Paused {
		at, why = p.last.WakeAt, p.last.WakeReason
	}
	if p.rules.BudgetPaces && p.last.Action != law.ActionNone && !p.state.Paused {
		// The wake's actions ran out (maxActionsPerWake) with one still
		// due: carry it out next, not at the safety resync.
		at, why = now, "carry out "+string(p.last.Action)
	}
	if noticeAt, ok := (interruptions{p}).noticeWake(); ok && noticeAt.Before(at) {
		at, why = noticeAt, "read interruption notices"
	}
	if meterAt := maxTime(p.state.MeterCursor.Add(time.Hour), p.meterRetryAt); meterAt.Before(at) {
		at, why = meterAt, "metering hour "+p.state.MeterCursor.Format("2006-01-02T15")
	}
	if !at.After(now) {
		at = now.Add(time.Second)
	}
	return at, why
}

// drainMessages applies every buffered signal without blocking. A signal
// that does not decode is recorded and dropped.
func (p *pool) drainMessages(ctx workflow.Context) {
	p.takeObservations(ctx)
	for {
		req, ok, err := receiveAsync[contract.ScaleRequest](p.force)
		if !ok {
			break
		}
		if err != nil {
			p.reject(ctx, "force-scale", err)
			continue
		}
		handlers{p}.applyForceScale(ctx, req)
	}
	p.takeGates(ctx)
	for p.wake.ReceiveAsync(nil) {
	}
}

// takeObservations applies every buffered observe signal.
func (p *pool) takeObservations(ctx workflow.Context) {
	for {
		obs, ok, err := receiveAsync[types.PoolObservation](p.observe)
		if !ok {
			return
		}
		if err != nil {
			p.reject(ctx, "observe", err)
			continue
		}
		p.applyObservation(ctx, obs, false)
	}
}

// takeGates applies every buffered cluster-gate signal (or, with trust,
// marks the gate to be read from the cluster workflow).
func (p *pool) takeGates(ctx workflow.Context) {
	for {
		g, ok, err := receiveAsync[contract.ClusterGate](p.gate)
		if !ok {
			break
		}
		if err != nil {
			p.reject(ctx, "cluster-gate", err)
			continue
		}
		if !p.auth.open() {
			// Anyone can send a signal: the gate's content is not taken,
			// the gate is read from the cluster workflow itself.
			p.gateDirty = true
			continue
		}
		p.apply(ctx, poolcore.GateChanged{Gate: g})
	}
}

func (p *pool) reject(ctx workflow.Context, what string, err error) {
	p.state.Reject(what, err, workflow.Now(ctx))
	workflow.GetLogger(ctx).Warn("rejected "+what, "error", err)
}

// apply takes an event into the pool's state (poolcore.State.Apply) and
// logs what it refused.
func (p *pool) apply(ctx workflow.Context, e poolcore.Event) {
	env := poolcore.Env{Pool: p.spec.Key, Now: workflow.Now(ctx), Rules: p.rules}
	for _, r := range p.state.Apply(env, e) {
		workflow.GetLogger(ctx).Warn("rejected "+r.What, "error", r.Err)
	}
}

// mustContinueAsNew: a run with parallel-removal continues as new before
// its next action once its history asks to, rather than after up to
// maxActionsPerWake of them (observations arriving meanwhile lengthen it).
func (p *pool) mustContinueAsNew(ctx workflow.Context) bool {
	return p.rules.ParallelRemoval && p.shouldContinueAsNew(ctx)
}

func (p *pool) shouldContinueAsNew(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxEventsPerRun
}

// continueAsNew carries all state into a fresh run. Signals that arrived
// meanwhile are applied first and handlers allowed to finish, so nothing is
// lost at the boundary.
func (p *pool) continueAsNew(ctx workflow.Context) error {
	p.cancelTimer()
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	p.drainMessages(ctx)
	p.state.ContinuedAsNew++
	return workflow.NewContinueAsNewError(ctx, PoolWorkflow, PoolInput{Spec: p.spec, State: p.state})
}

// announce tells the cluster workflow this pool exists (or is leaving), so
// the watcher samples it with its thresholds and the gate reaches it.
func (p *pool) announce(ctx workflow.Context, leaving bool) {
	name := contract.SignalPoolRegistered
	if leaving {
		name = contract.SignalPoolDeregistered
	}
	reg := contract.PoolRegistration{PoolID: p.spec.Key.WorkflowID(), Thresholds: contract.PoolThresholds{
		IdleCPU: p.state.Policy.IdleCPUThreshold, IdleMemory: p.state.Policy.IdleMemoryThreshold,
	}}
	// A cluster that is not enrolled yet does not hear it; the pool still
	// runs on its own resyncs and hears the gate once the cluster exists
	// and the pool announces again (every new run and policy change).
	_ = workflow.SignalExternalWorkflow(ctx, types.ClusterWorkflowID(p.spec.Key.Cluster), "", name, reg).Get(ctx, nil)
}
