package workflows

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// a names activity methods for ExecuteActivity; the worker registers the
// real struct.
var a *activities.Activities

// maxSizeFallbacks bounds re-planning when sizes run out of capacity.
const maxSizeFallbacks = 3

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

// scaleUp sizes the overdue pods and provisions the plan.
func (p *pool) scaleUp(ctx workflow.Context, d law.Decision) {
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionScaleUp), Reason: d.Reason}
	p.grow(ctx, rec, d.Pods, d.MinNewNodes, d.MaxNewNodes)
}

// grow provisions for the pods (at least minNew nodes, at most maxNew) and
// records the decision with its outcome.
func (p *pool) grow(ctx workflow.Context, rec contract.DecisionRecord, pods []types.PendingPod, minNew, maxNew int) {
	org := p.orgRoom(ctx)
	p.state.OrgNote = org.Note
	if org.Nodes <= 0 {
		rec.Outcome = poolcore.OutcomeNothingBought + org.Note
		p.state.LastScaleUp = workflow.Now(ctx) // wait a cooldown, not a wake-up
		p.state.Record(rec)
		return
	}
	maxNew = min(maxNew, org.Nodes)
	minNew = min(minNew, org.Nodes)
	added, size, offering, err := p.provision(ctx, rec.Seq, pods, minNew, maxNew, org)
	rec.Added, rec.Size = added, size
	switch {
	case err != nil:
		rec.Outcome = "failed: " + err.Error()
	case added == 0 && p.state.Budget != "":
		// The budget leaves nothing to buy: wait a cooldown, not a wake-up.
		rec.Outcome = poolcore.OutcomeNothingBought + p.state.Budget
		p.state.LastScaleUp = workflow.Now(ctx)
	case added == 0:
		rec.Outcome = poolcore.OutcomeNothingToAdd + p.state.UnplaceableSummary()
	default:
		rec.Outcome = fmt.Sprintf("asked for %d × %s", added, size)
		p.state.LastScaleUp = workflow.Now(ctx)
	}
	if offering != "" {
		rec.Reason += "; buys " + offering
	}
	p.state.Record(rec)
}

// freshGroupsAge is how old a provider read may be for a plan to pick
// its group from it: the read act made before this purchase, not one of
// a past wake-up.
const freshGroupsAge = 30 * time.Second

// provision plans and provisions within the org's room, falling back to
// the next size when the provider is out of capacity. It returns how many
// nodes of which size were asked for, and which offering was bought and
// why (empty without offerings).
func (p *pool) provision(ctx workflow.Context, seq int64, pods []types.PendingPod, minNew, maxNew int, org law.OrgRoom) (int, string, string, error) {
	excluded := p.state.BackedOffSizes(workflow.Now(ctx))
	fallbacks, machines := maxSizeFallbacks, p.state.MachinesBySize()
	if p.rules.Offerings {
		fallbacks, machines = maxOfferingFallbacks, p.state.OfferingMachines()
	}
	var tried []string // offerings that ran out in this decision
	for attempt := 0; attempt <= fallbacks; attempt++ {
		var plan activities.PlanResult
		in := activities.PlanInput{
			Key: p.spec.Key, Pods: pods, Existing: p.state.PlanRoom(workflow.Now(ctx), p.rules), AllowedSizes: p.state.Policy.AllowedSizes,
			PriceOverrides: p.spec.PriceOverrides, MinNewNodes: minNew, MaxNewNodes: maxNew, ExcludeSizes: excluded,
			NodeLabels: p.state.Policy.NodeLabels, NodeTaints: p.state.Policy.NodeTaints, Region: p.state.Gate.Region,
			DaemonOverhead: p.state.DaemonOverhead(),
			MaxHourlyCost:  p.state.Policy.MaxHourlyCost, Machines: machines, Offerings: p.planOfferings(workflow.Now(ctx)),
			OrgBudget: org.CostCapped, OrgBudgetRoom: org.CostRoom,
			FewerNodes: p.rules.FewerNodes, Objective: p.state.Policy.SizingObjective,
			Promised: p.state.AwaitingPods(), SkipGroups: p.state.DriftedGroups(p.rules), PriceAdjustments: p.state.Policy.PriceAdjustments,
		}
		if p.rules.LookAhead {
			in.Expected = law.RunningMix(p.state.Observation)
		}
		if v := p.state.Provider; v != nil && workflow.Now(ctx).Sub(v.ReadAt) < freshGroupsAge {
			// Read for this purchase (act reads before every action):
			// the plan needs no read of its own.
			in.Groups, in.GroupsKnown = activities.PlanGroupsOf(*v), true
		}
		if err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, quickActivity, "plan scale-up"), a.PlanScaleUp, in), &plan); err != nil {
			return 0, "", "", err
		}
		p.tellUnplaceable(ctx, p.park(plan.Unplaceable))
		p.state.Budget = plan.Budget
		if len(plan.SizeRoom) > 0 {
			p.state.SizeRoom = plan.SizeRoom
			p.state.SizeZones = plan.SizeZones
		}
		if len(plan.SizePrice) > 0 {
			p.state.SizePrice = plan.SizePrice
		}
		if len(plan.SizeGPUModel) > 0 {
			p.state.SizeGPUModel = plan.SizeGPUModel
		}
		if plan.NewNodes == 0 {
			return 0, "", "", nil
		}
		var res activities.ProvisionResult
		pin := activities.ProvisionInput{
			Key: p.spec.Key, Size: plan.Size, GroupID: plan.GroupID, Target: plan.GroupTarget + plan.NewNodes,
			IdempotencyKey: p.idempotencyKey(seq, fmt.Sprintf("provision-%d", attempt)),
			NodeLabels:     p.state.Policy.NodeLabels, NodeTaints: p.state.Policy.NodeTaints,
			CapacityType: plan.CapacityType, Zone: plan.Zone,
		}
		if plan.GroupID == "" {
			pin.GroupSuffix = p.state.GroupSuffix(p.rules, plan.Size, plan.CapacityType, plan.Zone)
		}
		summary := fmt.Sprintf("provision %d × %s", plan.NewNodes, plan.Size)
		err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, summary), a.Provision, pin), &res)
		if isErrorClass(err, errclass.InsufficientCapacity) {
			if p.rules.Offerings {
				p.soldOut(ctx, plan)
				tried = append(tried, plan.OfferingKey())
				continue
			}
			excluded = append(excluded, plan.Size)
			continue
		}
		if err != nil {
			return 0, plan.Size, "", err
		}
		p.state.StampGroup(p.rules, res.GroupID, plan.GroupID == "", pin.NodeLabels, pin.NodeTaints)
		p.bought(ctx, seq, plan, pods)
		p.tellBought(ctx, seq, plan, pods)
		p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
		return plan.NewNodes, plan.Size, plan.Offering, nil
	}
	if p.rules.Offerings {
		return 0, "", "", fmt.Errorf("no capacity in offerings %s (each not bought again for %s)", strings.Join(tried, ", "), poolcore.OfferingUnavailableFor)
	}
	return 0, "", "", fmt.Errorf("no capacity in sizes %s", strings.Join(excluded, ", "))
}

// scaleDown drains and deletes the named nodes, removalsAtOnce at a time
// (one at a time in a run begun before parallel-removal). A node that
// will not drain is uncordoned by the drain and left for later.
func (p *pool) scaleDown(ctx workflow.Context, reason string, nodes []string, requestedBy string) {
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

func (p *pool) removeNode(ctx workflow.Context, seq int64, node string) error {
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
func (p *pool) drainCall(ctx workflow.Context, node string) workflow.Future {
	drain := activities.DrainInput{Key: p.spec.Key, Node: node, Timeout: p.state.Policy.DrainTimeout}
	return workflow.ExecuteActivity(p.drainCtx(ctx, "drain "+node), a.DrainNode, drain)
}

func (p *pool) deleteCall(ctx workflow.Context, seq int64, node string) workflow.Future {
	del := activities.DeleteInput{Key: p.spec.Key, Node: node, IdempotencyKey: p.idempotencyKey(seq, "delete-"+node)}
	return workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, "delete node "+node), a.DeleteNode, del)
}

// deleted takes a delete's answer: the node is removed, and the provider's
// view read after it (or its total target) stands.
func (p *pool) deleted(ctx workflow.Context, node string, res activities.DeleteResult) {
	p.state.Removed[node] = workflow.Now(ctx)
	p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
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
		p.grow(ctx, rec, nil, m.Target-current, m.Target-current)
	case m.Target < current:
		p.scaleDown(ctx, reason, p.state.LeastUsedNodes(current-m.Target), m.RequestedBy)
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
		p.scaleDown(ctx, "pool deregistered", names, "deregister")
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
	p.meterThrough(ctx, workflow.Now(ctx).UTC().Truncate(time.Hour).Add(time.Hour))
	p.announce(ctx, true)
	p.publish(ctx)
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
