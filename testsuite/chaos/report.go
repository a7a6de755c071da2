package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// maxDetailsPerInvariant bounds the violation lines printed per row; the
// count in the table is always the full one.
const maxDetailsPerInvariant = 20

// printInvariants writes the table and each violation under it, and
// returns the total number of violations.
func printInvariants(w io.Writer, results []result) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INVARIANT\tCHECKED\tVIOLATIONS")
	total := 0
	for _, r := range results {
		if r.Advisory != "" {
			fmt.Fprintf(tw, "%s (advisory %s)\t%d\t%d\n", r.Name, r.Advisory, r.Checked, len(r.Violations))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\n", r.Name, r.Checked, len(r.Violations))
		total += len(r.Violations)
	}
	fmt.Fprintf(tw, "total\t\t%d\n", total)
	tw.Flush()
	for _, r := range results {
		if len(r.Violations) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", r.Name)
		for i, v := range r.Violations {
			if i == maxDetailsPerInvariant {
				fmt.Fprintf(w, "  … and %d more\n", len(r.Violations)-i)
				break
			}
			fmt.Fprintf(w, "  - %s\n", v)
		}
	}
	return total
}

// printPools writes each pool's final numbers as the checks saw them.
func printPools(w io.Writer, t truth) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tSTATE\tNODES\tTARGET\tPROVIDER\tMACHINES\tLEDGER ROWS\tMETERED THROUGH\tRUNS\tREPAIRS")
	for _, p := range t.Spec.Pools {
		id := p.Key.WorkflowID()
		provider, machines := 0, 0
		for _, g := range t.poolGroups(p.Key) {
			provider += g.TargetSize
			machines += len(g.Instances)
		}
		rows := 0
		for _, r := range t.Ledger {
			if r.PoolID == id {
				rows++
			}
		}
		runs := 0
		for _, r := range t.Runs {
			if r.WorkflowID == id {
				runs++
			}
		}
		state, nodes, target, metered, repairs := "?", "?", "?", "?", "?"
		if st := t.Pools.Status[id].Status; st != nil {
			state, nodes, target = st.State, fmt.Sprint(st.Nodes), fmt.Sprint(st.TargetNodes)
			metered, repairs = st.MeteredThrough.UTC().Format("2006-01-02T15"), fmt.Sprint(len(st.Repairs))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%s\n", id, state, nodes, target, provider, machines, rows, metered, runs, repairs)
	}
	tw.Flush()
}

// historyFigures sums what the histories show the chaos did.
type historyFigures struct {
	runs, continuedAsNew, events                   int
	taskTimeouts, benignTaskFailures, taskFailures int
	activityFailures, activityTimeouts             int
}

func sumHistories(runs []runTruth) historyFigures {
	var f historyFigures
	for _, r := range runs {
		f.runs++
		if r.Status == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			f.continuedAsNew++
		}
		f.events += r.Events
		f.taskTimeouts += r.TaskTimeouts
		f.activityFailures += r.ActivityFailures
		f.activityTimeouts += r.ActivityTimeouts
		for _, tf := range r.TaskFailures {
			if isBenign(tf.Cause) {
				f.benignTaskFailures++
			} else {
				f.taskFailures++
			}
		}
	}
	return f
}

func isBenign(c enumspb.WorkflowTaskFailedCause) bool { return slices.Contains(benignTaskFailures, c) }

// printFigures writes the run's numbers: how hard it shook the system.
func printFigures(w io.Writer, k killStats, s settled, h historyFigures, total time.Duration) {
	lines := []string{
		fmt.Sprintf("kill -9: %d (%d while starting, %d after it was up)", k.kills, k.duringStartup, k.kills-k.duringStartup),
		fmt.Sprintf("starts that failed: %d", len(k.failures)),
	}
	if k.startsUp > 0 {
		lines = append(lines, fmt.Sprintf("mean time to up: %s; mean time up before the kill: %s",
			(k.startTotal/time.Duration(k.startsUp)).Round(100*time.Millisecond), (k.upTotal/time.Duration(k.startsUp)).Round(100*time.Millisecond)))
	}
	if k.cutShort {
		lines = append(lines, "chaos phase CUT SHORT by its deadline or failed starts")
	}
	rest := "at rest"
	if !s.Settled {
		rest = "NOT at rest: " + s.Unrest
	}
	lines = append(lines,
		fmt.Sprintf("chaos phase: %s; settle: %s over %d polls, %s", k.elapsed.Round(time.Second), s.Took.Round(time.Second), s.Polls, rest),
		fmt.Sprintf("histories: %d runs (%d continued as new), %d events; %d workflow tasks timed out (kills), %d failed benignly, %d failed; %d activities failed for good, %d timed out",
			h.runs, h.continuedAsNew, h.events, h.taskTimeouts, h.benignTaskFailures, h.taskFailures, h.activityFailures, h.activityTimeouts),
		fmt.Sprintf("total: %s", total.Round(time.Second)),
	)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// startsResult is the row for visor dev itself: every start came up or
// was killed, and the final run stopped cleanly on SIGINT.
func startsResult(k killStats, final []string) result {
	r := result{Name: "visor dev starts and stops cleanly", Checked: k.kills + len(k.failures) + 1}
	r.Violations = append(append(r.Violations, k.failures...), final...)
	return r
}

// printWatchers writes each cluster watcher's attempt: the retry policy's
// attempt count keeps growing over restarts, so the report shows how often
// each watcher was started again.
func printWatchers(w io.Writer, t truth) {
	for _, c := range t.Spec.Clusters {
		id := types.ClusterWorkflowID(c.ID)
		fmt.Fprintf(w, "%s: %s\n", id, describeActivities(t.Pools.Open[id].Activities))
	}
}
