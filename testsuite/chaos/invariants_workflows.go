package main

import (
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// benignTaskFailures are workflow task failures the SDK and server cause
// in normal operation (a signal or update arriving while a task
// completes, a sticky queue reset), not a broken workflow.
var benignTaskFailures = []enumspb.WorkflowTaskFailedCause{
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_UPDATE,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE,
}

func checkFailedWorkflows(t truth) result {
	r := result{Name: "no failed workflow"}
	running := map[string]int{}
	for _, run := range t.Runs {
		r.Checked++
		where := run.WorkflowID + " run " + run.RunID
		switch run.Status {
		case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			running[run.WorkflowID]++
		case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		default:
			r.fail("%s: closed as %s", where, strings.TrimPrefix(run.Status.String(), "WORKFLOW_EXECUTION_STATUS_"))
		}
		if run.HistoryErr != "" {
			r.fail("%s: history unreadable: %s", where, run.HistoryErr)
		}
		for _, f := range run.TaskFailures {
			if !isBenign(f.Cause) {
				r.fail("%s: workflow task failed at event %d (%s): %s", where, f.EventID, strings.TrimPrefix(f.Cause.String(), "WORKFLOW_TASK_FAILED_CAUSE_"), firstLine(f.Message))
			}
		}
	}
	ids := []string{}
	for _, p := range t.Spec.Pools {
		ids = append(ids, p.Key.WorkflowID())
	}
	for _, c := range t.Spec.Clusters {
		ids = append(ids, types.ClusterWorkflowID(c.ID))
	}
	for _, id := range ids {
		if n := running[id]; n != 1 {
			r.fail("%s: %d running runs, want 1", id, n)
		}
	}
	return r
}

// Pool activities retry a few times under faults; this many attempts
// after the pools settled on a well-behaved cloud is an activity stuck.
const stuckActivityAttempts = 5

func checkStuckWorkflows(t truth) result {
	r := result{Name: "no stuck workflow"}
	for _, p := range t.Spec.Pools {
		r.Checked++
		id := p.Key.WorkflowID()
		rd := t.Pools.Status[id]
		if rd.Status == nil {
			r.fail("%s: status query failed: %s", id, rd.Err)
		} else {
			// The watcher signals only on change; the pool resyncs at least
			// every resync interval, so its observation is never older.
			limit := 3*max(p.Policy.ResyncInterval.D(), 30*time.Second) + stuckGrace
			if age := t.Pools.ReadAt.Sub(rd.Status.LastObservationAt); age > limit {
				r.fail("%s: last observation %s old (limit %s)", id, age.Round(time.Second), limit)
			}
		}
		o := t.Pools.Open[id]
		checkOpen(&r, o)
		for _, a := range o.Activities {
			if a.Attempt >= stuckActivityAttempts {
				r.fail("%s: activity %s %s at attempt %d: %s", id, a.Type, a.State, a.Attempt, firstLine(a.LastFailure))
			}
		}
	}
	for _, c := range t.Spec.Clusters {
		r.Checked++
		id := types.ClusterWorkflowID(c.ID)
		o := t.Pools.Open[id]
		checkOpen(&r, o)
		if o.DescribeErr != "" {
			continue
		}
		watching := false
		for _, a := range o.Activities {
			if a.Type == "WatchCluster" && a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED &&
				t.Pools.ReadAt.Sub(a.Heartbeat) < 2*time.Minute {
				watching = true
			}
		}
		if !watching {
			r.fail("%s: no WatchCluster activity running with a recent heartbeat (%s)", id, describeActivities(o.Activities))
		}
	}
	return r
}

func checkOpen(r *result, o openTruth) {
	switch {
	case o.DescribeErr != "":
		r.fail("%s: describe failed: %s", o.WorkflowID, o.DescribeErr)
	case o.TaskAttempt > 2:
		r.fail("%s: workflow task at attempt %d", o.WorkflowID, o.TaskAttempt)
	}
}

func describeActivities(as []pendingActivity) string {
	if len(as) == 0 {
		return "no pending activity"
	}
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, fmt.Sprintf("%s %s attempt %d", a.Type, a.State, a.Attempt))
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
