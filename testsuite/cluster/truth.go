package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/hanzoai/visor-fleet/contract"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// violations is what the ground-truth checks found, by invariant.
type violations map[string][]string

func (v violations) add(invariant, format string, args ...any) {
	v[invariant] = append(v[invariant], fmt.Sprintf(format, args...))
}

func (v violations) count() int {
	n := 0
	for _, vs := range v {
		n += len(vs)
	}
	return n
}

// Invariant names, as the report prints them.
const (
	invDuplicateMachine = "no duplicate machine"
	invDuplicateGroup   = "no duplicate node group"
	invLedgerDoubled    = "no meter hour doubled"
	invLedgerMissing    = "no meter hour missing"
	invTaskFailed       = "no workflow task failed"
	invRuns             = "one running run per workflow, none failed"
	invWatchers         = "one watcher acting per cluster at a time"
)

// checkMachines reads the sim host's clouds: every machine ID and node
// name once, one group per pool and size.
func (d *Deployment) checkMachines(v violations) (machines int) {
	for id, s := range d.Fleet.Sims {
		inv := s.Inventory()
		seenID, seenName, groups := map[string]string{}, map[string]string{}, map[string]string{}
		for _, g := range inv.Groups {
			k := g.Pool.WorkflowID() + " size " + g.Group.Size
			if other, dup := groups[k]; dup {
				v.add(invDuplicateGroup, "%s: %s has groups %s and %s", id, k, other, g.Group.ID)
			}
			groups[k] = g.Group.ID
			for _, m := range g.Group.Instances {
				machines++
				if where, dup := seenID[m.ID]; dup {
					v.add(invDuplicateMachine, "%s: machine %s in %s and %s", id, m.ID, where, g.Group.ID)
				}
				if where, dup := seenName[m.Name]; dup {
					v.add(invDuplicateMachine, "%s: node name %s in %s and %s", id, m.Name, where, g.Group.ID)
				}
				seenID[m.ID], seenName[m.Name] = g.Group.ID, g.Group.ID
			}
		}
		for _, l := range inv.Leaked {
			if where, dup := seenID[l.Instance.ID]; dup {
				v.add(invDuplicateMachine, "%s: machine %s leaked and in %s", id, l.Instance.ID, where)
			}
		}
	}
	return machines
}

// checkLedger reads the meter ledger the three platform workers share:
// one row per pool, meter, size and hour, and for every pool a row for
// each hour from its first up to its meter cursor.
func (d *Deployment) checkLedger(ctx context.Context, v violations, cursors map[string]time.Time) (rows int, err error) {
	l, err := meterledger.Open(d.Ledger)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	all, err := l.List(ctx, meterledger.Filter{})
	if err != nil {
		return 0, err
	}
	seen := map[string]int{}
	hours := map[string]map[time.Time]bool{}
	for _, r := range all {
		k := fmt.Sprintf("%s %s size %s hour %s", r.PoolID, r.MeterID, r.Size, r.Hour.UTC().Format("2006-01-02T15"))
		if seen[k]++; seen[k] == 2 {
			v.add(invLedgerDoubled, "%s: more than one row", k)
		}
		if hours[r.PoolID] == nil {
			hours[r.PoolID] = map[time.Time]bool{}
		}
		hours[r.PoolID][r.Hour.UTC()] = true
	}
	for id, cursor := range cursors {
		h := hours[id]
		if len(h) == 0 {
			continue
		}
		var first time.Time
		for hour := range h {
			if first.IsZero() || hour.Before(first) {
				first = hour
			}
		}
		for hour := first; hour.Before(cursor); hour = hour.Add(time.Hour) {
			if !h[hour] {
				v.add(invLedgerMissing, "%s: no row for hour %s (metered through %s)", id, hour.Format("2006-01-02T15"), cursor.UTC().Format("2006-01-02T15"))
			}
		}
	}
	return len(all), nil
}

// benignCauses are workflow task failures the server itself causes in
// normal operation (a signal or update racing a completion, a sticky
// queue reset after its worker died), not a broken workflow.
var benignCauses = map[enumspb.WorkflowTaskFailedCause]bool{
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND:       true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_UPDATE:        true,
	enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE: true,
}

// observeSignal is one observe signal a pool received: when, and from which
// worker process (the SDK client's identity, pid@host).
type observeSignal struct {
	At       time.Time
	Identity string
}

// historyFigures are what the histories show besides violations.
type historyFigures struct {
	Runs, Events, TaskTimeouts, BenignTaskFailures int
	// WatcherHandovers counts, per cluster, how often the observe
	// signals' sender changed.
	WatcherHandovers int
}

// checkHistories walks every run of every pool and cluster workflow:
// failed workflow tasks, runs that closed badly, and the observe signals'
// senders, grouped by cluster, for the single-watcher check.
func (d *Deployment) checkHistories(ctx context.Context, v violations) (historyFigures, error) {
	var fig historyFigures
	running := map[string]int{}
	byCluster := map[string][]observeSignal{}
	var token []byte
	for {
		resp, err := d.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, PageSize: 500, NextPageToken: token,
			Query: fmt.Sprintf("WorkflowType = '%s' OR WorkflowType = '%s'", contract.PoolWorkflow, contract.ClusterWorkflow),
		})
		if err != nil {
			return fig, fmt.Errorf("list workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			fig.Runs++
			id, run := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			switch e.GetStatus() {
			case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
				running[id]++
			case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
			default:
				v.add(invRuns, "%s run %s closed as %s", id, run, e.GetStatus())
			}
			cluster := ""
			if k, err := types.ParsePoolID(id); err == nil {
				cluster = k.Cluster
			}
			it := d.Client.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					return fig, fmt.Errorf("history of %s run %s: %w", id, run, err)
				}
				fig.Events++
				switch ev.GetEventType() {
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
					a := ev.GetWorkflowTaskFailedEventAttributes()
					if benignCauses[a.GetCause()] {
						fig.BenignTaskFailures++
					} else {
						v.add(invTaskFailed, "%s run %s event %d: %s: %s", id, run, ev.GetEventId(), a.GetCause(), firstLine(a.GetFailure().GetMessage()))
					}
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
					fig.TaskTimeouts++
				case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
					a := ev.GetWorkflowExecutionSignaledEventAttributes()
					if cluster != "" && a.GetSignalName() == contract.SignalObserve {
						byCluster[cluster] = append(byCluster[cluster], observeSignal{At: ev.GetEventTime().AsTime(), Identity: a.GetIdentity()})
					}
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	for _, c := range d.Spec.Clusters {
		running[types.ClusterWorkflowID(c.ID)] += 0
	}
	for _, p := range d.Spec.Pools {
		running[p.Key.WorkflowID()] += 0
	}
	for id, n := range running {
		if n != 1 {
			v.add(invRuns, "%s: %d running runs, want 1", id, n)
		}
	}
	for cluster, sigs := range byCluster {
		fig.WatcherHandovers += checkWatchers(v, cluster, sigs)
	}
	return fig, nil
}

// checkWatchers: a cluster's observe signals come from one watcher at a
// time. Each sender's signals span [first, last]; a second sender whose
// span overlaps another's by more than a moment (the server records a
// signal when it lands, and two pools' signals of one sample land apart)
// was a second watcher acting while the first still did.
func checkWatchers(v violations, cluster string, sigs []observeSignal) (handovers int) {
	const slack = 2 * time.Second
	sort.Slice(sigs, func(i, j int) bool { return sigs[i].At.Before(sigs[j].At) })
	type span struct{ first, last time.Time }
	spans := map[string]*span{}
	var order []string
	prev := ""
	for _, s := range sigs {
		sp := spans[s.Identity]
		if sp == nil {
			sp = &span{first: s.At}
			spans[s.Identity] = sp
			order = append(order, s.Identity)
		}
		sp.last = s.At
		if prev != "" && s.Identity != prev {
			handovers++
		}
		prev = s.Identity
	}
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			a, b := spans[order[i]], spans[order[j]]
			if overlap := minTime(a.last, b.last).Sub(maxTime(a.first, b.first)); overlap > slack {
				v.add(invWatchers, "%s: watchers %s and %s both signalled pools for %s (%s to %s)", cluster, order[i], order[j],
					overlap.Round(time.Second), maxTime(a.first, b.first).Format("15:04:05"), minTime(a.last, b.last).Format("15:04:05"))
			}
		}
	}
	return handovers
}

// poolCursors reads every pool's meter cursor (its status query).
func (d *Deployment) poolCursors(ctx context.Context, v violations) map[string]time.Time {
	out := map[string]time.Time{}
	for _, p := range d.Spec.Pools {
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		st, err := starter.PoolStatus(qctx, d.Client, p.Key)
		cancel()
		if err != nil {
			v.add(invRuns, "%s: status query: %v", p.Key.WorkflowID(), err)
			continue
		}
		out[p.Key.WorkflowID()] = st.MeteredThrough
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
