package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
)

// Per-pool metric names. With the Prometheus exporter counters gain
// "_total" and timers "_seconds".
const (
	MetricPoolNodes       = "visor_pool_nodes"
	MetricPoolTargetNodes = "visor_pool_target_nodes"
	MetricPoolPendingPods = "visor_pool_pending_pods"
	// MetricScaleDecisions counts decisions carried out, by direction
	// (up, down, none), reason (floor, pending-pods, idle, manual,
	// deregister, interruption, other) and outcome (ok, partial, noop, failed).
	MetricScaleDecisions = "visor_pool_scale_decisions"
	// MetricDecisionLatency is how long a decision took from being made to
	// its outcome being recorded: planning and provisioning for scale-up,
	// drain and delete for scale-down.
	MetricDecisionLatency = "visor_pool_decision_latency"
	// MetricNoHelpPods is how many pending pods a purchase did not help
	// (they buy nothing more until they change).
	MetricNoHelpPods = "visor_pool_no_help_pods"
	// MetricRunawayGuard is 1 while the runaway guard blocks scale-up.
	MetricRunawayGuard = "visor_pool_runaway_guard"
	// MetricInFlight is machines asked for at the provider, not yet nodes.
	MetricInFlight = "visor_pool_in_flight_machines"
	// MetricPoolState is 1 for the pool's current state, 0 for the others
	// (label state), so a dashboard counts pools by state.
	MetricPoolState = "visor_pool_state"
	// MetricOldestPending is how long the longest-waiting unschedulable
	// pod has waited, in seconds, as of the last observation.
	MetricOldestPending = "visor_pool_oldest_pending_seconds"
	// MetricHourlyCost is what the pool's machines cost per hour.
	MetricHourlyCost = "visor_pool_hourly_cost_dollars"
)

// poolMetrics remembers which decisions were already counted in this run.
type poolMetrics struct {
	// reportedSeq is the newest decision counted; reportedRepeats the
	// repeats its record held then.
	reportedSeq     int64
	reportedRepeats int
}

// emitMetrics publishes the pool's gauges and counts the decisions recorded
// since the last call. It goes through workflow.GetMetricsHandler, which
// emits nothing while replaying, so each decision is counted once per
// worker that carries it out, and never again on replay.
func (p publisher) emitMetrics(ctx workflow.Context) {
	h := p.metricsHandler(ctx)
	s := p.state
	h.Gauge(MetricPoolNodes).Update(float64(s.ObservedNodes()))
	h.Gauge(MetricPoolTargetNodes).Update(float64(s.NodeCount()))
	h.Gauge(MetricPoolPendingPods).Update(float64(s.PendingPods()))
	h.Gauge(MetricNoHelpPods).Update(float64(len(s.NoHelp)))
	h.Gauge(MetricInFlight).Update(float64(s.InFlight()))
	if p.rules.Offerings {
		h.Gauge(MetricOfferingsUnavailable).Update(float64(s.UnavailableCount(p.decided.At)))
	}
	guard := 0.0
	if limit, _ := s.Policy.EffectiveRunawayGuard(); p.decided.AddedWithoutProgress >= limit {
		guard = 1
	}
	h.Gauge(MetricRunawayGuard).Update(guard)
	state := p.state.StateName(p.last.Frozen)
	for _, st := range contract.PoolStates {
		v := 0.0
		if st == state {
			v = 1
		}
		h.WithTags(map[string]string{"state": st}).Gauge(MetricPoolState).Update(v)
	}
	h.Gauge(MetricOldestPending).Update(s.OldestPendingAge(workflow.Now(ctx)).Seconds())
	h.Gauge(MetricHourlyCost).Update(s.HourlyCost())

	// Decisions carried over by Continue-As-New were counted by the run
	// that made them.
	runStart := workflow.GetInfo(ctx).WorkflowStartTime
	now := workflow.Now(ctx)
	for _, d := range s.Decisions {
		// A record counts each decision folded into it (Repeats) once.
		newest, at := d.Newest()
		if newest <= p.metrics.reportedSeq || at.Before(runStart) {
			continue
		}
		n := d.Repeats + 1
		if d.Seq <= p.metrics.reportedSeq {
			n = d.Repeats - p.metrics.reportedRepeats
		}
		p.metrics.reportedSeq, p.metrics.reportedRepeats = newest, d.Repeats
		direction, reason, outcome := classifyDecision(d)
		h.WithTags(map[string]string{"direction": direction, "reason": reason, "outcome": outcome}).
			Counter(MetricScaleDecisions).Inc(int64(n))
		h.WithTags(map[string]string{"direction": direction}).
			Timer(MetricDecisionLatency).Record(now.Sub(at))
	}
}

// metricsHandler tags the pool's metrics with its identity.
func (p publisher) metricsHandler(ctx workflow.Context) client.MetricsHandler {
	k := p.spec.Key
	return workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		"pool": k.WorkflowID(), "org": k.Org, "project": k.Project,
		"service": k.Service, "provider": k.Provider, "cluster": k.Cluster,
	})
}

// classifyDecision maps a decision record onto low-cardinality labels; the
// record's own reason text holds numbers and would make a series per value.
func classifyDecision(d contract.DecisionRecord) (direction, reason, outcome string) {
	switch {
	case strings.HasSuffix(d.Action, "scale-up"):
		direction = "up"
	case strings.HasSuffix(d.Action, "scale-down"):
		direction = "down"
	default:
		direction = "none"
	}
	switch {
	case strings.HasPrefix(d.Action, "manual") || strings.HasPrefix(d.Reason, "manual target"):
		reason = "manual"
	case d.Action == actionInterruption:
		reason = "interruption"
	case d.Reason == "pool deregistered":
		reason = "deregister"
	case strings.Contains(d.Reason, "below the floor"):
		reason = "floor"
	case strings.Contains(d.Reason, "unschedulable"):
		reason = "pending-pods"
	case strings.Contains(d.Reason, "idle"):
		reason = "idle"
	default:
		reason = "other"
	}
	return direction, reason, decisionOutcome(d.Outcome)
}

func decisionOutcome(text string) string {
	switch {
	case strings.HasPrefix(text, "failed"):
		return "failed"
	case strings.HasPrefix(text, "nothing to add"), text == "already at target":
		return "noop"
	case strings.HasPrefix(text, "removed"):
		var removed, asked int
		if _, err := fmt.Sscanf(text, "removed %d of %d", &removed, &asked); err != nil {
			return "ok"
		}
		switch {
		case removed == asked:
			return "ok"
		case removed == 0:
			return "failed"
		default:
			return "partial"
		}
	}
	return "ok"
}
