package workflows

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// a names activity methods for ExecuteActivity; the worker registers the
// real struct.
var a *activities.Activities

// idempotencyKey is derived from durable state only, so a retried or
// replayed activity presents the same key to the provider.
func (p *pool) idempotencyKey(seq int64, step string) connectors.IdempotencyKey {
	if p.incarnation != "" {
		return connectors.IdempotencyKey(fmt.Sprintf("%s/%s/%d/%s", p.spec.Key.WorkflowID(), p.incarnation, seq, step))
	}
	return connectors.IdempotencyKey(fmt.Sprintf("%s/%d/%s", p.spec.Key.WorkflowID(), seq, step))
}

// incarnationOf is the short name of a pool's life: the first 12
// characters of the first run's ID (a UUID), which every later run of the
// chain keeps.
func incarnationOf(firstRunID string) string {
	return firstRunID[:min(len(firstRunID), 12)]
}

// resync samples the pool directly: the safety net when the watcher has
// been silent, and the fresh look before a scale-down.
func (p *pool) resync(ctx workflow.Context) {
	p.resyncWithProvider(ctx)
}

// resyncWithProvider samples the pool and reads its node groups in one
// activity: half the activities and workflow tasks of an idle pool's
// safety resync.
func (p *pool) resyncWithProvider(ctx workflow.Context) {
	var res activities.ResyncResult
	err := workflow.ExecuteActivity(p.activityCtx(ctx, quickActivity, "observe pool and read node groups"), a.Resync, p.spec.Key).Get(ctx, &res)
	if err != nil {
		p.state.ReceivedAt = workflow.Now(ctx)
		p.reject(ctx, "resync", err)
		return
	}
	p.applyObservation(ctx, res.Observation, true)
	if res.View != nil {
		p.apply(ctx, poolcore.ProviderRead{View: *res.View})
	} else {
		p.reject(ctx, "provider read", errors.New(res.ViewErr))
	}
}

// scaleTo carries out an explicit target: grow with the cheapest allowed
// size, or remove the least-used nodes.
func (p *pool) scaleTo(ctx workflow.Context, m poolcore.ManualScale) {
	current := p.state.NodeCount()
	reason := fmt.Sprintf("manual target %d: %s", m.Target, m.Reason)
	// A new manual target replaces any hold: held, it stands as the
	// floor until the hold ends; unheld, the law takes over at once.
	p.state.HoldTarget, p.state.HoldUntil = 0, time.Time{}
	if m.Hold > 0 {
		p.state.HoldTarget, p.state.HoldUntil = m.Target, workflow.Now(ctx).Add(m.Hold.D())
		reason += fmt.Sprintf(" (held as the floor until %s)", p.state.HoldUntil.UTC().Format(time.RFC3339))
	}
	switch {
	case m.Target > current:
		rec := contract.DecisionRecord{Seq: m.Seq, At: workflow.Now(ctx), Action: poolcore.ActionManualScaleUp, Reason: reason, RequestedBy: m.RequestedBy}
		purchase{p}.grow(ctx, rec, nil, m.Target-current, m.Target-current)
	case m.Target < current:
		removal{p}.scaleDown(ctx, reason, p.state.LeastUsedNodes(current-m.Target), m.RequestedBy)
	default:
		p.state.Record(contract.DecisionRecord{Seq: m.Seq, At: workflow.Now(ctx), Action: "manual-scale", Reason: reason, RequestedBy: m.RequestedBy, Outcome: "already at target"})
	}
}

// deregister drains every node, then completes the workflow.
func (p *pool) deregister(ctx workflow.Context) error {
	p.cancelTimer()
	p.resync(ctx)
	var names []string
	if p.state.Observation != nil {
		for _, n := range p.state.Observation.Nodes {
			names = append(names, n.Name)
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		removal{p}.scaleDown(ctx, "pool deregistered", names, "deregister")
	}
	// Machines asked for but not yet nodes (or joined since the last look)
	// would be orphaned, still billed at the provider: release every group
	// to zero.
	p.release(ctx)
	// The nodes are gone: meter the hour in progress too, so the last
	// partial hour is billed before the workflow completes. The meter
	// bills machines up to the provider's last word: read it after the
	// release, so every machine is seen ended.
	p.readProvider(ctx)
	billing{p}.meterThrough(ctx, workflow.Now(ctx).UTC().Truncate(time.Hour).Add(time.Hour))
	p.announce(ctx, true)
	publisher{p}.publish(ctx)
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	// Signals that arrived while draining are taken (and any refusal
	// recorded) rather than left unhandled at completion.
	p.drainMessages(ctx)
	return nil
}

// release sets every node group of the pool to zero at the provider.
func (p *pool) release(ctx workflow.Context) {
	seq := p.state.NextSeq()
	in := activities.ReleaseInput{Key: p.spec.Key, IdempotencyKey: p.idempotencyKey(seq, "release")}
	var res activities.ReleaseResult
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: "release", Reason: "pool deregistered", RequestedBy: "deregister"}
	if err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, "release node groups"), a.ReleasePool, in), &res); err != nil {
		rec.Outcome = "failed: " + err.Error()
	} else {
		rec.Outcome = fmt.Sprintf("released %d groups, %d machines", res.Groups, res.Released)
		p.state.TargetNodes = 0
	}
	p.state.Record(rec)
}

func isErrorClass(err error, class errclass.Class) bool {
	var appErr *temporal.ApplicationError
	return err != nil && errors.As(err, &appErr) && appErr.Type() == string(class)
}

// providerHeartbeatTimeout is how long a provider activity may go without
// a heartbeat (activities/heartbeat.go beats every 2 s) before the server
// takes its worker for lost and retries it elsewhere.
const providerHeartbeatTimeout = 10 * time.Second

// activity kinds, each with its own timeouts.
type activityKind int

const (
	quickActivity activityKind = iota
	providerActivity
)

func (p *pool) activityCtx(ctx workflow.Context, kind activityKind, summary string) workflow.Context {
	opts := workflow.ActivityOptions{
		TaskQueue: p.spec.ProviderTaskQueue,
		Summary:   summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: errclass.NonRetryable,
		},
	}
	switch kind {
	case quickActivity:
		opts.StartToCloseTimeout = 30 * time.Second
		opts.ScheduleToCloseTimeout = 3 * time.Minute
	case providerActivity:
		// The provider call may take its time; the worker making it
		// heartbeats, so one lost mid-call is retried within seconds
		// instead of holding the pool for the whole StartToClose.
		opts.StartToCloseTimeout = 2 * time.Minute
		opts.HeartbeatTimeout = providerHeartbeatTimeout
		opts.ScheduleToCloseTimeout = 15 * time.Minute
		opts.RetryPolicy.MaximumAttempts = 10
	}
	return workflow.WithActivityOptions(ctx, opts)
}

// platformCtx is activityCtx on the workflows' own task queue: facts that
// are the platform's to state (the cluster's gate and billing tier, the
// org's usage and limits) come from the platform's worker, never from a
// tenant's own worker on the pool's providerTaskQueue. (Replay does not
// compare an activity's task queue, so moving one needs no version.)
func (p *pool) platformCtx(ctx workflow.Context, kind activityKind, summary string) workflow.Context {
	actx := p.activityCtx(ctx, kind, summary)
	opts := workflow.GetActivityOptions(actx)
	opts.TaskQueue = workflow.GetInfo(ctx).TaskQueueName
	return workflow.WithActivityOptions(ctx, opts)
}

func (p *pool) drainCtx(ctx workflow.Context, summary string) workflow.Context {
	timeout := p.state.Policy.DrainTimeout.D()
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           p.spec.ProviderTaskQueue,
		Summary:             summary,
		StartToCloseTimeout: timeout + time.Minute,
		HeartbeatTimeout:    30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        3,
			NonRetryableErrorTypes: errclass.NonRetryable,
		},
	})
}
