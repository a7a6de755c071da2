package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// truth is everything the checks read: the spec the run declared, the
// sims' state files, the meter ledger and the workflows as Temporal has them.
type truth struct {
	Spec   starter.SpecFile
	Sims   map[string]simTruth
	Ledger []metering.Row
	Pools  poolsReading
	Runs   []runTruth
}

// result is one invariant: how many things it looked at and what broke it.
type result struct {
	Name       string
	Checked    int
	Violations []string
}

func (r *result) fail(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Grace added to a pool's own timeouts before the checker calls a machine
// or a workflow stuck: the pool acts on its resync, not the instant a
// timeout ends.
const stuckGrace = 30 * time.Second

// checkAll runs every invariant, in the order the table prints them.
func checkAll(t truth) []result {
	return []result{
		checkDuplicateGroups(t),
		checkDuplicateMachines(t),
		checkTargets(t),
		checkOrphans(t),
		checkBounds(t),
		checkLedgerUnique(t),
		checkLedgerGaps(t),
		checkFailedWorkflows(t),
		checkStuckWorkflows(t),
		checkMachineTimeouts(t),
	}
}

func (t truth) clusterIDs() []string { return slices.Sorted(maps.Keys(t.Sims)) }

// poolGroups are a pool's groups at the provider.
func (t truth) poolGroups(k types.PoolKey) []connectors.NodeGroup {
	var out []connectors.NodeGroup
	for _, g := range t.Sims[k.Cluster].Inventory.Groups {
		if g.Pool == k {
			out = append(out, g.Group)
		}
	}
	return out
}

func checkDuplicateGroups(t truth) result {
	r := result{Name: "no duplicate node group"}
	for _, c := range t.clusterIDs() {
		bySize, byName := map[string][]string{}, map[string][]string{}
		for _, g := range t.Sims[c].Inventory.Groups {
			r.Checked++
			k := g.Pool.WorkflowID() + " size " + g.Group.Size
			bySize[k] = append(bySize[k], g.Group.ID)
			byName[g.Group.Name] = append(byName[g.Group.Name], g.Group.ID)
		}
		for _, k := range slices.Sorted(maps.Keys(bySize)) {
			if ids := bySize[k]; len(ids) > 1 {
				r.fail("%s: %s has %d groups: %s", c, k, len(ids), strings.Join(ids, ", "))
			}
		}
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			if ids := byName[n]; len(ids) > 1 {
				r.fail("%s: group name %s is used by %s", c, n, strings.Join(ids, ", "))
			}
		}
	}
	return r
}

func checkDuplicateMachines(t truth) result {
	r := result{Name: "no duplicate machine"}
	for _, c := range t.clusterIDs() {
		inv := t.Sims[c].Inventory
		byID, byName := map[string][]string{}, map[string][]string{}
		for _, g := range inv.Groups {
			for _, m := range g.Group.Instances {
				r.Checked++
				byID[m.ID] = append(byID[m.ID], "group "+g.Group.ID)
				byName[m.Name] = append(byName[m.Name], "group "+g.Group.ID)
			}
		}
		for _, l := range inv.Leaked {
			r.Checked++
			byID[l.Instance.ID] = append(byID[l.Instance.ID], "leaked")
		}
		for _, id := range slices.Sorted(maps.Keys(byID)) {
			if where := byID[id]; len(where) > 1 {
				r.fail("%s: machine %s appears %d times (%s)", c, id, len(where), strings.Join(where, ", "))
			}
		}
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			if where := byName[n]; len(where) > 1 {
				r.fail("%s: node name %s belongs to %d machines (%s)", c, n, len(where), strings.Join(where, ", "))
			}
		}
	}
	return r
}

func checkTargets(t truth) result {
	r := result{Name: "pool target = provider target"}
	for _, p := range t.Spec.Pools {
		r.Checked++
		id := p.Key.WorkflowID()
		st := t.Pools.Status[id].Status
		if st == nil {
			r.fail("%s: no status (%s)", id, t.Pools.Status[id].Err)
			continue
		}
		provider := 0
		for _, g := range t.poolGroups(p.Key) {
			provider += g.TargetSize
		}
		if st.TargetNodes != provider {
			r.fail("%s: pool says target %d, provider's groups total %d", id, st.TargetNodes, provider)
		}
	}
	return r
}

func checkOrphans(t truth) result {
	r := result{Name: "no orphaned machine"}
	known := map[types.PoolKey]bool{}
	for _, p := range t.Spec.Pools {
		known[p.Key] = true
	}
	for _, c := range t.clusterIDs() {
		s := t.Sims[c]
		machines := map[string]bool{}
		for _, g := range s.Inventory.Groups {
			for _, m := range g.Group.Instances {
				r.Checked++
				machines[m.Name] = true
			}
			if !known[g.Pool] {
				r.fail("%s: group %s (%d machines) belongs to %s, which is no pool of the spec", c, g.Group.ID, len(g.Group.Instances), g.Pool.WorkflowID())
			}
		}
		for _, l := range s.Inventory.Leaked {
			r.Checked++
			r.fail("%s: machine %s (%s, launched %s) is tagged for %s but in no group", c, l.Instance.ID, l.Size, l.Instance.CreatedAt.Format(time.RFC3339), l.Pool.WorkflowID())
		}
		for _, n := range s.Nodes {
			if !strings.HasPrefix(n.Spec.ProviderID, "sim://") {
				continue // not a machine of the cloud (none in the sim today)
			}
			r.Checked++
			if !machines[n.Name] {
				r.fail("%s: node %s (%s) has no machine in any group", c, n.Name, n.Spec.ProviderID)
			}
		}
	}
	return r
}

func checkBounds(t truth) result {
	r := result{Name: "node counts within [min, max]"}
	for _, p := range t.Spec.Pools {
		r.Checked++
		id, lo, hi := p.Key.WorkflowID(), p.Policy.MinNodes, p.Policy.MaxNodes
		target, machines := 0, 0
		for _, g := range t.poolGroups(p.Key) {
			target += g.TargetSize
			machines += len(g.Instances)
		}
		nodes := 0
		for _, n := range t.Sims[p.Key.Cluster].Nodes {
			if n.Labels[types.LabelPool] == p.Key.NodePoolLabel() {
				nodes++
			}
		}
		for _, c := range []struct {
			what string
			n    int
		}{{"provider target", target}, {"machines", machines}, {"cluster nodes", nodes}} {
			if c.n < lo || c.n > hi {
				r.fail("%s: %s %d outside [%d, %d]", id, c.what, c.n, lo, hi)
			}
		}
	}
	return r
}

func checkLedgerUnique(t truth) result {
	r := result{Name: "one ledger row per pool, size, hour"}
	seen := map[string]int{}
	for _, row := range t.Ledger {
		r.Checked++
		seen[fmt.Sprintf("%s size %s hour %s", row.Pool, row.Size, row.Hour.UTC().Format("2006-01-02T15"))]++
	}
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if n := seen[k]; n > 1 {
			r.fail("%s: %d rows", k, n)
		}
	}
	return r
}

// checkLedgerGaps: every hour from a pool's first metered hour up to its
// meter cursor has a row (every chaos pool keeps at least one node, so
// every hour has something to bill), no row lies past the cursor, the
// first row is no later than the pool's first hour (or the one after, when
// it started in the hour's last moments), and the cursor is not behind
// the last complete hour.
func checkLedgerGaps(t truth) result {
	r := result{Name: "no gap in a pool's metered hours"}
	firstStart := map[string]time.Time{}
	for _, run := range t.Runs {
		if s, ok := firstStart[run.WorkflowID]; !ok || run.Start.Before(s) {
			firstStart[run.WorkflowID] = run.Start
		}
	}
	hours := map[string]map[time.Time]bool{}
	known := map[string]bool{}
	for _, p := range t.Spec.Pools {
		known[p.Key.WorkflowID()] = true
	}
	for _, row := range t.Ledger {
		if !known[row.Pool] {
			r.fail("ledger row for %s, which is no pool of the spec (%s)", row.Pool, row.Idempotency)
			continue
		}
		if hours[row.Pool] == nil {
			hours[row.Pool] = map[time.Time]bool{}
		}
		hours[row.Pool][row.Hour.UTC()] = true
	}
	lastComplete := t.Pools.ReadAt.UTC().Truncate(time.Hour)
	for _, p := range t.Spec.Pools {
		id := p.Key.WorkflowID()
		st := t.Pools.Status[id].Status
		if st == nil {
			r.Checked++
			r.fail("%s: no status, so no meter cursor (%s)", id, t.Pools.Status[id].Err)
			continue
		}
		cursor := st.MeteredThrough.UTC()
		start := firstStart[id].UTC().Truncate(time.Hour)
		h := hours[id]
		// The cursor may lag the hour that just ended by the time the
		// meter activity takes; more than that is a pool not metering.
		if cursor.Before(lastComplete) && t.Pools.ReadAt.Sub(lastComplete) > 5*time.Minute {
			r.fail("%s: metered through %s, but the hour before %s is complete", id, cursor.Format("2006-01-02T15"), lastComplete.Format("2006-01-02T15"))
		}
		if len(h) == 0 {
			r.Checked++
			if cursor.After(start.Add(time.Hour)) {
				r.fail("%s: metered through %s but the ledger has no row for it", id, cursor.Format("2006-01-02T15"))
			}
			continue
		}
		first := minTime(h)
		if first.After(start.Add(time.Hour)) {
			r.fail("%s: first row is for %s, but the pool started in hour %s", id, first.Format("2006-01-02T15"), start.Format("2006-01-02T15"))
		}
		for hour := first; hour.Before(cursor); hour = hour.Add(time.Hour) {
			r.Checked++
			if !h[hour] {
				r.fail("%s: no row for hour %s (metered through %s)", id, hour.Format("2006-01-02T15"), cursor.Format("2006-01-02T15"))
			}
		}
		for hour := range h {
			if !hour.Before(cursor) {
				r.fail("%s: row for hour %s, at or past the meter cursor %s", id, hour.Format("2006-01-02T15"), cursor.Format("2006-01-02T15"))
			}
		}
	}
	return r
}

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

// checkMachineTimeouts: after settling, no machine is still booting past
// the pool's provision timeout and no node still NotReady past its
// unready timeout; the pool replaces both.
func checkMachineTimeouts(t truth) result {
	r := result{Name: "no machine left past its timeout"}
	for _, p := range t.Spec.Pools {
		provision := p.Policy.EffectiveProvisionTimeout() + 2*p.Policy.ResyncInterval.D() + stuckGrace
		unready := p.Policy.EffectiveUnreadyTimeout() + 2*p.Policy.ResyncInterval.D() + stuckGrace
		nodes := map[string]corev1.Node{}
		for _, n := range t.Sims[p.Key.Cluster].Nodes {
			nodes[n.Name] = n
		}
		for _, g := range t.poolGroups(p.Key) {
			for _, m := range g.Instances {
				r.Checked++
				n, registered := nodes[m.Name]
				ready, since := nodeReady(n)
				switch {
				case (!registered || m.State == connectors.InstanceCreating) && !ready &&
					!m.CreatedAt.IsZero() && t.Pools.ReadAt.Sub(m.CreatedAt) > provision:
					r.fail("%s: machine %s (%s) launched %s ago is not a Ready node (limit %s)", p.Key.WorkflowID(), m.ID, m.Name, t.Pools.ReadAt.Sub(m.CreatedAt).Round(time.Second), provision)
				case registered && m.State == connectors.InstanceRunning && !ready &&
					!since.IsZero() && t.Pools.ReadAt.Sub(since) > unready:
					r.fail("%s: node %s NotReady for %s (limit %s)", p.Key.WorkflowID(), m.Name, t.Pools.ReadAt.Sub(since).Round(time.Second), unready)
				}
			}
		}
	}
	return r
}

// nodeReady is the node's Ready condition and since when it has been so.
func nodeReady(n corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
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

func minTime(set map[time.Time]bool) time.Time {
	var first time.Time
	for h := range set {
		if first.IsZero() || h.Before(first) {
			first = h
		}
	}
	return first
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
