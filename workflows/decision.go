package workflows

import (
	"fmt"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// This file is the control law: a pure, deterministic function of (policy,
// durable state, observation, now). Read it against DESIGN.md's table. The
// workflow only feeds it and carries out what it returns.

// Action is what a decision asks the workflow to do.
type Action string

const (
	ActionNone      Action = "none"
	ActionScaleUp   Action = "scale-up"
	ActionScaleDown Action = "scale-down"
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
	// InFlightNodes were asked for at the provider but are not yet observed.
	InFlightNodes int
	// Gate says what the cluster phase and reachability allow.
	Gate Gate
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
}

// IsIdle reports whether a node is below both idle thresholds.
func IsIdle(p types.Policy, n types.NodeObservation) bool {
	return n.State == types.NodeReady &&
		n.CPUUtilization() < p.IdleCPUThreshold &&
		n.MemoryUtilization() < p.IdleMemoryThreshold
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
	age := in.Now.Sub(obs.ObservedAt)
	stale := age > p.EffectiveStaleAfter()
	if !stale {
		wake(obs.ObservedAt.Add(p.EffectiveStaleAfter()).Add(time.Nanosecond), "observation goes stale")
	}
	current := CountNodes(obs, in.InFlightNodes)

	// Floor first: a pool below its floor grows without waiting for demand.
	if current < p.MinNodes && in.Gate.AllowScaleUp {
		d.Action = ActionScaleUp
		d.MinNewNodes = p.MinNodes - current
		d.MaxNewNodes = p.MaxNodes - current
		d.Pods = overdue(in, nil)
		d.Reason = fmt.Sprintf("%d nodes is below the floor of %d", current, p.MinNodes)
		return d
	}

	// Scale up: pods unschedulable longer than the threshold.
	pods := overdue(in, wake)
	if len(pods) > 0 {
		upCooldownEnd := in.LastScaleUp.Add(p.ScaleUpCooldown.D())
		switch {
		case !in.Gate.AllowScaleUp:
			d.Blocked = append(d.Blocked, fmt.Sprintf("%d pods pending but scale-up is not allowed: %s", len(pods), in.Gate.Reason))
		case current >= p.MaxNodes:
			d.Blocked = append(d.Blocked, fmt.Sprintf("%d pods pending but the pool is at its ceiling of %d nodes", len(pods), p.MaxNodes))
		case in.Now.Before(upCooldownEnd):
			d.Blocked = append(d.Blocked, fmt.Sprintf("%d pods pending; cooldown after scale-up until %s", len(pods), upCooldownEnd.UTC().Format(time.RFC3339)))
			wake(upCooldownEnd, "cooldown after scale-up")
		default:
			d.Action = ActionScaleUp
			d.Pods = pods
			d.MaxNewNodes = p.MaxNodes - current
			d.Reason = fmt.Sprintf("%d pods unschedulable longer than %s", len(pods), p.PendingThreshold)
			return d
		}
	}

	// Scale down: never on stale or missing data, never while pods wait.
	switch {
	case stale:
		d.Frozen = fmt.Sprintf("observation is %s old (stale after %s): scale-down frozen", age.Round(time.Second), p.EffectiveStaleAfter())
		return d
	case !in.Gate.AllowScaleDown:
		d.Frozen = "scale-down frozen: " + in.Gate.Reason
		return d
	case len(obs.PendingPods) > 0:
		return d
	}
	var idle []string
	for _, n := range obs.Nodes {
		since, ok := in.IdleSince[n.Name]
		if !ok || !IsIdle(p, n) {
			continue
		}
		if until, blocked := in.DrainBlocked[n.Name]; blocked && in.Now.Before(until) {
			wake(until, "retry drain of "+n.Name)
			continue
		}
		end := since.Add(p.IdleWindow.D())
		if in.Now.Before(end) {
			wake(end, "idle window "+n.Name)
			continue
		}
		idle = append(idle, n.Name)
	}
	if len(idle) == 0 {
		return d
	}
	sort.Slice(idle, func(i, j int) bool {
		// Longest idle first, then by name for determinism.
		a, b := in.IdleSince[idle[i]], in.IdleSince[idle[j]]
		if !a.Equal(b) {
			return a.Before(b)
		}
		return idle[i] < idle[j]
	})
	downCooldownEnd := latest(in.LastScaleDown.Add(p.ScaleDownCooldown.D()), in.LastScaleUp.Add(p.ScaleUpCooldown.D()))
	room := current - p.MinNodes
	switch {
	case room <= 0:
		d.Blocked = append(d.Blocked, fmt.Sprintf("%d idle nodes but the pool is at its floor of %d", len(idle), p.MinNodes))
		return d
	case in.InFlightNodes > 0:
		d.Blocked = append(d.Blocked, fmt.Sprintf("%d idle nodes but %d nodes are still provisioning", len(idle), in.InFlightNodes))
		return d
	case in.Now.Before(downCooldownEnd):
		d.Blocked = append(d.Blocked, fmt.Sprintf("%d idle nodes; cooldown until %s", len(idle), downCooldownEnd.UTC().Format(time.RFC3339)))
		wake(downCooldownEnd, "cooldown after scale-down")
		return d
	}
	limit := min(room, len(idle))
	if p.MaxScaleDownPerDecision > 0 {
		limit = min(limit, p.MaxScaleDownPerDecision)
	}
	d.Action = ActionScaleDown
	d.RemoveNodes = idle[:limit]
	d.Reason = fmt.Sprintf("%d nodes idle below %.0f%% CPU and %.0f%% memory for %s", len(idle), p.IdleCPUThreshold*100, p.IdleMemoryThreshold*100, p.IdleWindow)
	return d
}

// overdue returns the pending pods past the threshold, sorted by key, and
// asks for a wake-up at the next pod's threshold. Pods already reported as
// unplaceable are left out.
func overdue(in DecisionInput, wake func(time.Time, string)) []types.PendingPod {
	var out []types.PendingPod
	for _, pod := range in.Observation.PendingPods {
		if _, bad := in.Unplaceable[pod.Key()]; bad {
			continue
		}
		due := pod.UnschedulableSince.Add(in.Policy.PendingThreshold.D())
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

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// UpdateIdleSince folds a new observation into the idle clocks: a node seen
// idle keeps (or starts) its clock at the observation time; one seen busy,
// not ready, or gone loses it. One busy sample breaks the window.
func UpdateIdleSince(p types.Policy, prev map[string]time.Time, obs types.PoolObservation) map[string]time.Time {
	next := make(map[string]time.Time, len(obs.Nodes))
	for _, n := range obs.Nodes {
		if !IsIdle(p, n) {
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
