package kwok

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

// podCensus counts a burst's pods by where they are in scheduling: bound,
// nominated (preemption picked a node), marked Unschedulable by
// kube-scheduler, or not tried yet (no PodScheduled condition at all).
type podCensus struct{ bound, nominated, unschedulable, untried int }

func (c podCensus) String() string {
	return fmt.Sprintf("bound %d, nominated %d, unschedulable %d, not tried yet %d", c.bound, c.nominated, c.unschedulable, c.untried)
}

func census(pods []corev1.Pod) podCensus {
	var c podCensus
	for i := range pods {
		p := &pods[i]
		switch {
		case p.Spec.NodeName != "":
			c.bound++
		case p.Status.NominatedNodeName != "":
			c.nominated++
		case hasUnschedulable(p):
			c.unschedulable++
		default:
			c.untried++
		}
	}
	return c
}

func hasUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// dumpPools logs what each pool believes (the status query) and
// kube-scheduler's queues: what a stalled burst is read from.
func (e *env) dumpPools(t *testing.T, keys []types.PoolKey) {
	t.Helper()
	for _, key := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := starter.PoolStatus(ctx, e.stack.Client, key)
		cancel()
		if err != nil {
			t.Logf("pool %s: no status: %v", key.Service, err)
			continue
		}
		t.Logf("pool %s: state=%s nodes=%d target=%d pending=%d inFlight=%d noHelp=%d addedWithoutProgress=%d deferred=%d blocked=%q budget=%q",
			key.Service, st.State, st.Nodes, st.TargetNodes, st.PendingPods, st.InFlight, len(st.NoHelp), st.AddedWithoutProgress, st.Deferred, st.Blocked, st.Budget)
		for _, k := range slices.Sorted(maps.Keys(st.NoHelp)) {
			t.Logf("  noHelp %s: %s", k, st.NoHelp[k])
			break // one is enough to read why
		}
		from := max(0, len(st.Decisions)-3)
		for _, d := range st.Decisions[from:] {
			t.Logf("  decision #%d %s %s +%d -%d: %.160s (%s)", d.Seq, d.At.Format(time.TimeOnly), d.Action, d.Added, len(d.Removed), d.Reason, d.Outcome)
		}
		e.dumpPendingActivities(t, key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	text, err := e.cluster.Metrics(ctx, "kube-scheduler")
	if err != nil {
		t.Logf("kube-scheduler metrics: %v", err)
		return
	}
	t.Logf("kube-scheduler: %s", schedulerQueues(text))
}

// schedulerQueues picks kube-scheduler's pending-pod gauges by queue and
// its attempt counters by result out of its Prometheus text.
func schedulerQueues(text string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "scheduler_pending_pods{") || strings.HasPrefix(line, "scheduler_schedule_attempts_total{") {
			out = append(out, line)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// cpuSeconds is a process's user+system CPU time so far (/proc/<pid>/stat,
// fields 14 and 15, in clock ticks of 100 Hz).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// The command may hold spaces; the fields after it start past ')'.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}

// cpuUse is the CPU each process of the run took since a mark: this
// process (Temporal server, worker, pools, watcher) and each control-plane
// server, as "name 12.3 s (0.41 cores)".
type cpuUse struct {
	pids  map[int]string
	start map[int]float64
	at    time.Time
}

func markCPU(c *kubeapi.Cluster) cpuUse {
	u := cpuUse{pids: map[int]string{os.Getpid(): "visor"}, start: map[int]float64{}, at: time.Now()}
	for _, pid := range c.PIDs() {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		u.pids[pid] = strings.TrimSpace(string(comm))
	}
	for pid := range u.pids {
		u.start[pid] = cpuSeconds(pid)
	}
	return u
}

func (u cpuUse) String() string {
	wall := time.Since(u.at).Seconds()
	var parts []string
	for pid, name := range u.pids {
		used := cpuSeconds(pid) - u.start[pid]
		parts = append(parts, fmt.Sprintf("%s %.1f s (%.2f cores)", name, used, used/wall))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// dumpPendingActivities logs what the pool's workflow waits on: a pool
// silent inside a decision is read from its activity in hand.
func (e *env) dumpPendingActivities(t *testing.T, key types.PoolKey) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := e.stack.Client.DescribeWorkflowExecution(ctx, key.WorkflowID(), "")
	if err != nil {
		t.Logf("  describe %s: %v", key.WorkflowID(), err)
		return
	}
	info := d.GetWorkflowExecutionInfo()
	t.Logf("  run %s: %s, %d events, %d bytes of history", info.GetExecution().GetRunId(), info.GetStatus(), info.GetHistoryLength(), info.GetHistorySizeBytes())
	for _, a := range d.GetPendingActivities() {
		failure := ""
		if f := a.GetLastFailure(); f != nil {
			failure = f.GetMessage()
		}
		t.Logf("  activity %s (%s) state=%s attempt=%d scheduled %s, started %s, last heartbeat %s: %.300s; last failure: %.200s",
			a.GetActivityType().GetName(), a.GetActivityId(), a.GetState(), a.GetAttempt(),
			a.GetScheduledTime().AsTime().Format(time.TimeOnly), a.GetLastStartedTime().AsTime().Format(time.TimeOnly),
			a.GetLastHeartbeatTime().AsTime().Format(time.TimeOnly), a.GetHeartbeatDetails().String(), failure)
	}
}
