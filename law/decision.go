package law

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// This file is the control law: a pure, deterministic function of (policy,
// durable state, observation, now). Read it against docs/design.md's table. The
// workflow only feeds it and carries out what it returns.

// Action is what a decision asks the workflow to do.
type Action string

const (
	ActionNone      Action = "none"
	ActionScaleUp   Action = "scale-up"
	ActionScaleDown Action = "scale-down"
	// ActionRepair deletes machines that never became Ready nodes and
	// replaces nodes NotReady for too long.
	ActionRepair Action = "repair"
	// ActionReplace buys one node to replace underused ones
	// (Decision.Replacing); they are drained once it is Ready.
	ActionReplace Action = "replace"
)

// DecisionInput is everything Decide reads.
type DecisionInput struct {
	Policy      types.Policy
	Observation *types.PoolObservation // nil: never observed
	Now         time.Time
	// Durable state the pool carries.
	LastScaleUp   time.Time
	LastScaleDown time.Time
	// IdleSince is when each node was first seen idle without a break.
	IdleSince map[string]time.Time
	// Unplaceable pods were already reported as fitting no size; they are
	// not retried until they change or the policy does.
	Unplaceable map[string]string
	// DrainBlocked nodes failed a drain; they are not retried before the time.
	DrainBlocked map[string]time.Time
	// Removed nodes were drained and deleted at the provider by the pool;
	// their Node objects may linger a while (Rules.BudgetPaces).
	Removed map[string]time.Time
	// InFlightNodes were asked for at the provider but are not yet observed.
	InFlightNodes int
	// Gate says what the cluster phase and reachability allow.
	Gate Gate

	// Machines are the provider's machines with their nodes' state (nil:
	// the provider's view is not known).
	Machines []Machine
	// Leaked machines carry the pool's identity outside all its groups.
	Leaked []Machine
	// NotReadySince: since when each node that was once Ready has been
	// NotReady without a break.
	NotReadySince map[string]time.Time
	// Deferred pods were left out of the last scale-up only because it
	// grew another size; they are sized at once, cooldown or not.
	Deferred map[string]bool
	// Awaiting pods had nodes bought for them that are not judged yet
	// (booting, or Ready too briefly): they buy nothing more meanwhile.
	Awaiting map[string]bool
	// NoHelp pods got a node that became Ready and are still pending:
	// scale-up did not help them, and they buy nothing more until they
	// change.
	NoHelp map[string]string
	// AddedWithoutProgress is how many nodes the pool added within the
	// policy's progress window while no pending pod got scheduled onto a
	// new node (the runaway guard).
	AddedWithoutProgress int
	// HeadroomShort are the headroom pods the pool's nodes have no room
	// for now: demand that never waits for the threshold.
	HeadroomShort []types.PendingPod
	// KeepsHeadroom says whether removing these nodes keeps the headroom
	// (nil: the pool keeps none).
	KeepsHeadroom func(remove []string) (bool, string)
	// HoldFloor is a manual target held as the floor until HoldUntil.
	HoldFloor int
	HoldUntil time.Time
	// UnderusedSince are the consolidation rules' clocks
	// (UpdateUnderusedSince).
	UnderusedSince map[string]time.Time
	// Rules are the rules the law applies (AllRules in a pool run).
	Rules Rules
	// Replacing is the replacement under way (Rules.Replace), nil if none;
	// the caller drops it once ReplacementLive says so.
	Replacing *Replacement
	// SizeRoom and SizePrice are each allowed size's room for pods and
	// hourly price, as the last plan gave them: what a replacement may buy.
	SizeRoom  map[string]types.Resources
	SizePrice map[string]float64
	// SizeGPUModel is each GPU size's GPU model, from the catalog: a GPU
	// replacement (Rules.ReplaceGPU) buys only a size of the old nodes'
	// model. Nil: no GPU node is replaced.
	SizeGPUModel map[string]string
	// Prewarm are the stand-in pods a pre-warm buys for (PrewarmPods,
	// Rules.Prewarm): demand the pool's model expects within a
	// provisioning delay that its Ready nodes lack. Like headroom they
	// never wait for the threshold; PrewarmWhy says what was forecast.
	Prewarm    []types.PendingPod
	PrewarmWhy string
	// Lifecycle judges drift and expiry (decision_lifecycle.go); nil
	// leaves both off.
	Lifecycle *Lifecycle
}

// Machine is one provider machine as the law sees it.
type Machine struct {
	ID        string    `json:"id,omitempty"`
	Name      string    `json:"name"`
	Size      string    `json:"size"`
	GroupID   string    `json:"groupID"`
	CreatedAt time.Time `json:"createdAt,omitempty"`
	// Node is the state of the node it registered as; "" if none yet.
	Node types.NodeState `json:"node,omitempty"`
}

// MachineAction names a machine the law wants deleted or replaced.
type MachineAction struct {
	ID      string `json:"id,omitempty"`
	Name    string `json:"name"`
	Size    string `json:"size"`
	GroupID string `json:"groupID"`
	Reason  string `json:"reason"`
}

// Gate is the cluster's say over the pool, from its phase and reachability.
type Gate struct {
	AllowScaleUp   bool
	AllowScaleDown bool
	Reason         string // why something is not allowed
}

// OpenGate allows everything: an active, reachable cluster.
func OpenGate() Gate { return Gate{AllowScaleUp: true, AllowScaleDown: true} }

// Decision is Decide's answer.
type Decision struct {
	Action Action `json:"action"`
	Reason string `json:"reason"`
	// ScaleUp: the pods that waited past the threshold, and how many nodes
	// may be added before the ceiling. MinNewNodes > 0 when the pool is
	// below its floor.
	Pods        []types.PendingPod `json:"pods,omitempty"`
	MaxNewNodes int                `json:"maxNewNodes,omitempty"`
	MinNewNodes int                `json:"minNewNodes,omitempty"`
	// ScaleDown: the idle nodes to drain and delete, by name.
	RemoveNodes []string `json:"removeNodes,omitempty"`
	// WakeAt is the next moment the answer could change without a new
	// observation (threshold reached, idle window over, cooldown over,
	// observation going stale); zero means only a new observation can.
	WakeAt     time.Time `json:"wakeAt,omitempty"`
	WakeReason string    `json:"wakeReason,omitempty"`
	// Frozen explains why scale-down is held back (stale data, cluster
	// unreachable), for the status query and the Web UI.
	Frozen string `json:"frozen,omitempty"`
	// Blocked lists what the law wanted but could not do, with why.
	Blocked []string `json:"blocked,omitempty"`
	// Repair: machines that never became Ready nodes (Expire: delete and
	// back the size off) and nodes NotReady too long (Replace: cordon,
	// drain as far as possible, delete, buy one of the same size).
	Expire  []MachineAction `json:"expire,omitempty"`
	Replace []MachineAction `json:"replace,omitempty"`
	// Collect: leaked machines older than the provision timeout, by ID.
	Collect []MachineAction `json:"collect,omitempty"`
	// Skipped idle nodes that cannot be emptied, with why.
	Skipped []string `json:"skipped,omitempty"`
	// Replacing (ActionReplace): the replacement to start, whose new node
	// the workflow buys and whose old nodes a later decision drains.
	Replacing *Replacement `json:"replacing,omitempty"`
	// Prewarm is how many of Pods stand for demand bought on forecast.
	Prewarm int `json:"prewarm,omitempty"`
	// Forced (ActionDisrupt): nodes past terminationGracePeriod, drained
	// as far as they go and deleted whatever blocks the drain.
	Forced []string `json:"forced,omitempty"`
	// Held: idle nodes past their idle window that this decision keeps,
	// each with the rule that keeps it and until when (Rules.BudgetPaces).
	Held map[string]string `json:"held,omitempty"`
}

// IsIdle reports whether a node is idle on every resource it offers: below
// both thresholds on CPU and memory, and no GPU in use (a GPU pod asking
// little CPU still keeps its node busy).
func IsIdle(p types.Policy, n types.NodeObservation) bool {
	return n.State == types.NodeReady && n.IdleBelow(p.IdleCPUThreshold, p.IdleMemoryThreshold)
}

// CountNodes is the pool's size as the ceiling and floor see it: every
// observed node not being deleted, plus nodes asked for but not yet seen.
func CountNodes(obs *types.PoolObservation, inFlight int) int {
	n := inFlight
	if obs != nil {
		for _, node := range obs.Nodes {
			if node.State != types.NodeDeleting {
				n++
			}
		}
	}
	return n
}

// Decide applies the control law.
func Decide(in DecisionInput) Decision {
	p := in.Policy
	d := Decision{Action: ActionNone}
	wake := func(at time.Time, why string) {
		if at.After(in.Now) && (d.WakeAt.IsZero() || at.Before(d.WakeAt)) {
			d.WakeAt, d.WakeReason = at, why
		}
	}
	if in.Observation == nil {
		d.Reason = "no observation yet"
		d.Frozen = "no observation yet: scale-down frozen"
		return d
	}
	obs := in.Observation
	// Scheduled capacity: a window's floor or ceiling holds while it is
	// open (the floor from one provisioning delay before).
	b := EffectiveBounds(in.Policy, in.Now)
	p.MinNodes, p.MaxNodes = b.MinNodes, b.MaxNodes
	wake(NextChange(in.Policy, in.Now), "capacity window")
	if in.Now.Before(in.HoldUntil) {
		p.MinNodes = min(max(p.MinNodes, in.HoldFloor), p.MaxNodes)
		wake(in.HoldUntil, "manual hold ends")
	}
	age := in.Now.Sub(obs.ObservedAt)
	stale := age > p.EffectiveStaleAfter()
	if !stale {
		wake(obs.ObservedAt.Add(p.EffectiveStaleAfter()).Add(time.Nanosecond), "observation goes stale")
	}
	current := CountNodes(obs, in.InFlightNodes)

	// Machines that never joined and nodes gone NotReady are repaired
	// before anything is bought around them, unless so many are unready
	// that the failure is the cluster's, not the machines'.
	repair, massFailure := machineHealth(in, wake)
	if massFailure == "" && (len(repair.Expire) > 0 || len(repair.Replace) > 0 || len(repair.Collect) > 0) {
		repair.WakeAt, repair.WakeReason = d.WakeAt, d.WakeReason
		return repair
	}

	// Floor first: a pool below its floor grows without waiting for demand.
	if current < p.MinNodes && in.Gate.AllowScaleUp {
		d.Action = ActionScaleUp
		d.MinNewNodes = p.MinNodes - current
		d.MaxNewNodes = p.MaxNodes - current
		d.Pods = overdue(in, nil)
		d.Reason = fmt.Sprintf("%s is below the floor of %d", Plural(current, "node"), p.MinNodes)
		return d
	}

	// Scale up: pods unschedulable longer than the threshold, and the
	// headroom the pool keeps, which never waits for the threshold.
	pods := append(overdue(in, wake), in.HeadroomShort...)
	pods = append(pods, in.Prewarm...)
	consolidating := in.Rules.Consolidation
	if len(pods) > 0 {
		upCooldownEnd := in.LastScaleUp.Add(p.ScaleUpCooldown.D())
		guardNodes, guardWindow := p.EffectiveRunawayGuard()
		switch {
		case !in.Gate.AllowScaleUp:
			d.Blocked = append(d.Blocked, fmt.Sprintf("%s pending but scale-up is not allowed: %s", Plural(podCount(pods), "pod"), in.Gate.Reason))
		case current >= p.MaxNodes:
			d.Blocked = append(d.Blocked, fmt.Sprintf("%s pending but the pool is at its ceiling of %d nodes", Plural(podCount(pods), "pod"), p.MaxNodes))
		case in.AddedWithoutProgress >= guardNodes:
			d.Blocked = append(d.Blocked, fmt.Sprintf("runaway guard: %s added within %s and no pending pod got scheduled onto a new node; %s pending buy nothing until one does",
				Plural(in.AddedWithoutProgress, "node"), guardWindow, Plural(podCount(pods), "pod")))
		case in.Now.Before(upCooldownEnd) && !anyDeferred(in, pods) && !(consolidating && len(uncovered(in, pods)) > 0):
			d.Blocked = append(d.Blocked, fmt.Sprintf("%s pending; cooldown after scale-up until %s", Plural(podCount(pods), "pod"), upCooldownEnd.UTC().Format(time.RFC3339)))
			wake(upCooldownEnd, "cooldown after scale-up")
		default:
			d.Action = ActionScaleUp
			d.Pods = pods
			d.MaxNewNodes = p.MaxNodes - current
			d.Reason = fmt.Sprintf("%s unschedulable longer than %s", Plural(podCount(pods), "pod"), p.PendingThreshold)
			if in.Rules.Batch {
				d.Reason = fmt.Sprintf("%s unschedulable, their batch closed (%s after the newest, at most %s, or the threshold %s)", Plural(podCount(pods), "pod"), BatchIdle, BatchMax, p.PendingThreshold)
			}
			if n := bufferPods(pods); n > 0 {
				d.Reason += fmt.Sprintf("; %s of them room kept for CapacityBuffers", Plural(n, "pod"))
			}
			if len(in.Prewarm) > 0 {
				d.Prewarm = len(in.Prewarm)
				d.Reason += fmt.Sprintf("; bought on forecast: room for %s (%s)", Plural(len(in.Prewarm), "expected pod"), in.PrewarmWhy)
			}
			return d
		}
	}

	// Scale down: never on stale or missing data, never while pods wait.
	if current > p.MaxNodes {
		d.Blocked = append(d.Blocked, fmt.Sprintf("the pool has %d nodes, above its ceiling of %d: idle nodes are removed as they empty", current, p.MaxNodes))
	}
	switch {
	case massFailure != "":
		d.Frozen = massFailure
		return d
	case stale:
		d.Frozen = fmt.Sprintf("observation is %s old (stale after %s): scale-down frozen", age.Round(time.Second), p.EffectiveStaleAfter())
		return d
	case !in.Gate.AllowScaleDown:
		d.Frozen = "scale-down frozen: " + in.Gate.Reason
		return d
	case obs.PendingCount() > 0 && !onlyUnplaceable(in):
		return d
	case obs.Unbound > 0:
		// kube-scheduler has pods of the pool still to place: the room an
		// idle or underused node offers is theirs first. An observer that
		// does not count them reports 0 and holds nothing back.
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s of the pool not placed by kube-scheduler yet: scale-down waits for them", Plural(obs.Unbound, "pod")))
		holdIdle(in, p, &d, "pods kube-scheduler has not placed yet", time.Time{})
		return d
	}
	// Disruption windows: scale-down only when one allows it.
	sd := ScaleDownAllowed(in.Policy, in.Now)
	wake(sd.Until, "disruption window")
	if !sd.Allowed {
		d.Blocked = append(d.Blocked, "scale-down not allowed now: "+sd.Reason)
		holdIdle(in, p, &d, "the disruption window ("+sd.Reason+")", sd.Until)
		return d
	}
	if in.Rules.Lifecycle && lifecycle(in, p, current, &d, wake) {
		return d
	}
	if in.Rules.Replace && ReplacementLive(in.Policy, in.Replacing, obs, in.Now) && replacementDrain(in, p, current, &d) {
		return d
	}
	if in.Rules.Replace && in.Rules.KeepReplacement && ReplacementLive(in.Policy, in.Replacing, obs, in.Now) {
		wake(in.Replacing.Since.Add(in.Policy.EffectiveProvisionTimeout()).Add(time.Nanosecond), "replacement times out")
	}
	// The node a replacement waits for is neither idle nor underused until
	// it completes or is abandoned.
	kept := keptForReplacement(in)
	in.UnderusedSince = without(in.UnderusedSince, kept)
	var idle []string
	empty := map[string]bool{}
	for _, n := range obs.Nodes {
		since, ok := in.IdleSince[n.Name]
		if !ok || !IsIdle(p, n) {
			continue
		}
		if n.Name == kept {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s is not idle: it is the new node of the replacement under way", n.Name))
			continue
		}
		if len(n.DrainBlockers) > 0 {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s cannot be emptied: %s", n.Name, strings.Join(n.DrainBlockers, "; ")))
			continue
		}
		empty[n.Name] = n.Requested.MilliCPU == 0 && n.Requested.Memory == 0
		until, blocked := in.DrainBlocked[n.Name]
		if blocked && in.Now.Before(until) {
			wake(until, "retry drain of "+n.Name)
			continue
		}
		end := since.Add(p.IdleWindow.D())
		if in.Now.Before(end) && !(blocked && in.Rules.RetryBlocked) {
			wake(end, "idle window "+n.Name)
			continue
		}
		idle = append(idle, n.Name)
	}
	if len(idle) == 0 {
		if consolidating {
			consolidate(in, p, current, &d, wake)
		}
		return d
	}
	sort.Slice(idle, func(i, j int) bool {
		// Empty nodes first (nothing to evict), then longest idle, then by
		// name for determinism.
		if empty[idle[i]] != empty[idle[j]] {
			return empty[idle[i]]
		}
		a, b := in.IdleSince[idle[i]], in.IdleSince[idle[j]]
		if !a.Equal(b) {
			return a.Before(b)
		}
		return idle[i] < idle[j]
	})
	downCooldownEnd := scaleDownCooldownEnd(in, p)
	room := current - p.MinNodes
	switch {
	case room <= 0:
		d.Blocked = append(d.Blocked, fmt.Sprintf("%d idle nodes but the pool is at its floor of %d", len(idle), p.MinNodes))
		holdIdle(in, p, &d, fmt.Sprintf("the floor of %d", p.MinNodes), time.Time{})
		return d
	case in.InFlightNodes > 0:
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s idle but %s still provisioning", Plural(len(idle), "node"), Plural(in.InFlightNodes, "machine")))
		holdIdle(in, p, &d, Plural(in.InFlightNodes, "machine")+" still provisioning", time.Time{})
		return d
	case in.Now.Before(downCooldownEnd):
		d.Blocked = append(d.Blocked, fmt.Sprintf("%d idle nodes; cooldown until %s", len(idle), downCooldownEnd.UTC().Format(time.RFC3339)))
		wake(downCooldownEnd, "cooldown after scale-down")
		holdIdle(in, p, &d, "the cooldown after scale-down", downCooldownEnd)
		return d
	}
	limit := min(room, len(idle))
	if p.MaxScaleDownPerDecision > 0 {
		limit = min(limit, p.MaxScaleDownPerDecision)
	}
	budgetHeld := false
	if slots := DrainSlots(in.Policy, current, draining(in)); slots < limit {
		if slots <= 0 {
			d.Blocked = append(d.Blocked, fmt.Sprintf("%s idle; the disruption budget allows no more nodes draining at once", Plural(len(idle), "node")))
			holdIdle(in, p, &d, budgetRule(in.Policy, current), time.Time{})
			return d
		}
		limit, budgetHeld = slots, true
	}
	var remove []string
	if in.Rules.PackIdle {
		remove = packIdle(in, idle, limit, &d)
	} else {
		remove = fitsElsewhere(obs, idle, limit, &d)
	}
	if in.KeepsHeadroom != nil {
		remove = keepHeadroom(remove, in.KeepsHeadroom, &d)
	}
	if budgetHeld && len(remove) > 0 {
		// The rest wait for the drains this decision starts.
		d.RemoveNodes = remove
		holdIdle(in, p, &d, budgetRule(in.Policy, current), time.Time{})
	}
	if len(remove) == 0 {
		if consolidating {
			consolidate(in, p, current, &d, wake)
		}
		return d
	}
	d.Action = ActionScaleDown
	d.RemoveNodes = remove
	d.Reason = fmt.Sprintf("%s idle below %.0f%% CPU and %.0f%% memory for %s", Plural(len(idle), "node"), p.IdleCPUThreshold*100, p.IdleMemoryThreshold*100, p.IdleWindow)
	return d
}

// overdue returns the pending pods past the threshold, sorted by key, and
// asks for a wake-up at the next pod's threshold. Pods already reported as
// unplaceable are left out. A shape's pods beyond the observation's list
// come as one entry with a count (types.PendingShape.UnlistedPod), due when
// the oldest of them is: they are the shape's newest, so waiting for each
// would only defer the same purchase. Booting room, which the planner
// counts, keeps such an entry from buying twice while its nodes boot.
func overdue(in DecisionInput, wake func(time.Time, string)) []types.PendingPod {
	var out []types.PendingPod
	var batchClose time.Time
	if in.Rules.Batch {
		batchClose = closeOfBatch(in)
	}
	for _, pod := range in.Observation.PendingEntries() {
		if !waitsToBuy(in, pod) {
			continue
		}
		due := pod.UnschedulableSince.Add(in.Policy.PendingThreshold.D())
		if in.Rules.Batch {
			due = earliest(due, batchClose)
		}
		if in.Now.Before(due) {
			if wake != nil {
				wake(due, "pending threshold "+pod.Key())
			}
			continue
		}
		out = append(out, pod)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// scaleDownCooldownEnd is when scale-down may act again: after the
// cooldowns after scale-down and after scale-up. With the consolidation
// rules a scale-up does not hold scale-down back: new nodes are not idle
// or underused for a window anyway, and a pool that keeps growing for new
// demand would otherwise never shrink.
func scaleDownCooldownEnd(in DecisionInput, p types.Policy) time.Time {
	end := in.LastScaleDown.Add(p.ScaleDownCooldown.D())
	if in.Rules.BudgetPaces && budgeted(in.Policy) {
		// The budget paces scale-down: a node goes once a drain slot is
		// free, not a cooldown after the last one.
		end = time.Time{}
	}
	if in.Rules.Consolidation {
		return end
	}
	return latest(end, in.LastScaleUp.Add(p.ScaleUpCooldown.D()))
}

// onlyUnplaceable reports whether every pending pod was reported as fitting
// no size. Such pods do not hold scale-down back: kube-scheduler has
// already refused them every existing node, so removing an idle one
// strands nothing, and one bad pod would otherwise pin the pool at its
// peak for as long as it stays.
func onlyUnplaceable(in DecisionInput) bool {
	for _, pod := range in.Observation.PendingEntries() {
		if _, bad := in.Unplaceable[pod.Key()]; !bad {
			return false
		}
	}
	return true
}

// podCount is how many pods the entries stand for.
func podCount(pods []types.PendingPod) int {
	n := 0
	for _, p := range pods {
		n += p.Pods()
	}
	return n
}

// UpdateIdleSince folds a new observation into the idle clocks: a node seen
// idle keeps (or starts) its clock at the observation time; one seen busy,
// not ready, or gone loses it. One busy sample breaks the window.
func UpdateIdleSince(p types.Policy, prev map[string]time.Time, obs types.PoolObservation) map[string]time.Time {
	return foldClocks(prev, obs, func(n types.NodeObservation) bool { return IsIdle(p, n) })
}

// foldClocks keeps each node's clock while holds says so, starting it at
// the observation time; a node that does not hold, or is gone, loses it.
func foldClocks(prev map[string]time.Time, obs types.PoolObservation, holds func(types.NodeObservation) bool) map[string]time.Time {
	next := make(map[string]time.Time, len(obs.Nodes))
	for _, n := range obs.Nodes {
		if !holds(n) {
			continue
		}
		if since, ok := prev[n.Name]; ok {
			next[n.Name] = since
		} else {
			next[n.Name] = obs.ObservedAt
		}
	}
	return next
}

// without is m less key, m itself when it has no such key.
func without[V any](m map[string]V, key string) map[string]V {
	if _, ok := m[key]; !ok {
		return m
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// budgeted says whether the policy caps the nodes draining at once.
func budgeted(p types.Policy) bool {
	return p.Disruption != nil && (p.Disruption.MaxDrainingNodes > 0 || p.Disruption.MaxDrainingPercent > 0)
}

// budgetRule names the disruption budget as a rule holding idle nodes.
func budgetRule(p types.Policy, poolNodes int) string {
	return fmt.Sprintf("the disruption budget (%d draining at once); until a drain ends", MaxDraining(p, poolNodes))
}

// holdIdle records, with Rules.BudgetPaces, the rule that keeps the idle
// nodes past their idle window this decision does not remove, and until
// when (zero: until the rule's input changes); one Blocked line sums them
// up when no line names them yet.
func holdIdle(in DecisionInput, p types.Policy, d *Decision, rule string, until time.Time) {
	if !in.Rules.BudgetPaces {
		return
	}
	removing := map[string]bool{}
	for _, name := range d.RemoveNodes {
		removing[name] = true
	}
	why := rule
	if !until.IsZero() {
		why += " until " + until.UTC().Format(time.RFC3339)
	}
	var held []string
	for _, n := range in.Observation.Nodes {
		since, ok := in.IdleSince[n.Name]
		if !ok || !IsIdle(p, n) || removing[n.Name] || len(n.DrainBlockers) > 0 || in.Now.Before(since.Add(p.IdleWindow.D())) {
			continue
		}
		if d.Held == nil {
			d.Held = map[string]string{}
		}
		if _, set := d.Held[n.Name]; !set {
			d.Held[n.Name] = why
			held = append(held, n.Name)
		}
	}
	if len(held) > 0 {
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s idle past the idle window of %s, kept by %s", Plural(len(held), "node"), p.IdleWindow, why))
	}
}
