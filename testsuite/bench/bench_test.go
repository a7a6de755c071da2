package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

func startServer(b *testing.B, cloud *instantCloud) client.Client {
	b.Helper()
	ctx := context.Background()
	opts := devserver.Options{Memory: true, GRPCPort: testsuite.FreePort(b), UIPort: -1, LogLevel: "error",
		SearchAttributes: starter.SearchAttributeTypes(), LogFile: os.DevNull}
	// VISOR_BENCH_STORE=file: the SQLite file in a data directory, as
	// `visor dev` runs by default; else in memory (--memory).
	if os.Getenv("VISOR_BENCH_STORE") == "file" {
		opts.Memory, opts.DataDir = false, b.TempDir()
	}
	srv, err := devserver.Start(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop() })
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	// VISOR_BENCH_STICKY_CACHE: workflows the worker keeps cached (the
	// SDK's default is 10,000), as `visor worker --sticky-cache-size`.
	if size := testsuite.EnvInt(b, "VISOR_BENCH_STICKY_CACHE", 0, 0); size > 0 {
		worker.SetStickyWorkflowCacheSize(size)
	}
	w := workers.New(c, contract.DefaultTaskQueue, &activities.Activities{Clusters: cloud, Temporal: c}, worker.Options{})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	return c
}

// BenchmarkDecisionLatency: from an `observe` signal whose pending pod is
// past the threshold to the provisioning call at the provider.
func BenchmarkDecisionLatency(b *testing.B) {
	cloud := newInstantCloud()
	c := startServer(b, cloud)
	ctx := context.Background()
	key := types.PoolKey{Org: "bench", Project: "latency", Service: "api", Provider: "sim", Cluster: "bench"}
	p := types.DefaultPolicy()
	// Every pod buys a node: no ceiling, no runaway guard in the way, and
	// each pod larger than the booting machines' size (the instant cloud's
	// groups report sim-2c4g), so booting room never holds it.
	p.MinNodes, p.MaxNodes = 0, types.MaxPolicyNodes
	p.MaxNodesWithoutProgress = types.MaxPolicyNodes
	p.ScaleUpCooldown = 0
	p.PendingThreshold = types.Duration(time.Second)
	if _, _, err := starter.EnrollCluster(ctx, c, contract.ClusterDeclared{ID: "bench", Provider: "sim", Phase: contract.PhaseActive}, ""); err != nil {
		b.Fatal(err)
	}
	if _, err := starter.ApplyPool(ctx, c, contract.PoolSpec{Key: key, Policy: p}, ""); err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second) // let the first resync settle
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		pod := types.PendingPod{Namespace: "bench", Name: fmt.Sprintf("p%d", i), Org: key.Org, Project: key.Project, Service: key.Service,
			Requests: types.Resources{MilliCPU: 3000, Memory: types.GiB, Pods: 1}, UnschedulableSince: time.Now().Add(-time.Minute)}
		obs := types.PoolObservation{Pool: key, ObservedAt: time.Now(), Nodes: []types.NodeObservation{}, PendingPods: []types.PendingPod{pod}}
		sent := time.Now()
		if err := c.SignalWorkflow(ctx, key.WorkflowID(), "", contract.SignalObserve, obs); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-cloud.provisioned:
			lat = append(lat, at.Sub(sent))
			// Let the decision finish before the next crossing, so each
			// signal meets a pool out of its (1ms) cooldown.
			b.StopTimer()
			time.Sleep(100 * time.Millisecond)
			b.StartTimer()
		case <-time.After(30 * time.Second):
			b.Fatalf("no provisioning 30s after signal %d", i)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkIdlePools: CPU of the in-process server and worker with N idle
// pools registered (VISOR_BENCH_IDLE_POOLS, default 1,000), over one full
// safety-resync interval, how fast an idle pool's history grows (events and
// bytes, per pool-day), how long applying them took and the process's
// resident memory at the end.
//
//	VISOR_BENCH_IDLE_POOLS=10000 go test -run '^$' -bench IdlePools -benchtime 1x -timeout 60m ./testsuite/bench
func BenchmarkIdlePools(b *testing.B) {
	n := testsuite.EnvInt(b, "VISOR_BENCH_IDLE_POOLS", 1000, 1)
	window := testsuite.EnvDuration(b, "VISOR_BENCH_IDLE_WINDOW", 6*time.Minute)
	// Start-up work (each pool's first tasks, the cluster's registrations)
	// must drain before the window: the window starts this long after the
	// cluster has every pool registered.
	settle := testsuite.EnvDuration(b, "VISOR_BENCH_IDLE_SETTLE", 2*time.Minute)
	cloud := newInstantCloud()
	c := startServer(b, cloud)
	ctx := context.Background()
	if _, _, err := starter.EnrollCluster(ctx, c, contract.ClusterDeclared{ID: "bench", Provider: "sim", Phase: contract.PhaseActive}, ""); err != nil {
		b.Fatal(err)
	}
	p := types.DefaultPolicy()
	p.MinNodes = 0
	key := func(i int) types.PoolKey {
		return types.PoolKey{Org: fmt.Sprintf("org%d", i%50), Project: "idle", Service: fmt.Sprintf("svc%d", i), Provider: "sim", Cluster: "bench"}
	}
	specs := make([]contract.PoolSpec, n)
	for i := range specs {
		specs[i] = contract.PoolSpec{Key: key(i), Policy: p}
	}
	stopProfile := profileCPU(b, os.Getenv("VISOR_BENCH_APPLY_CPUPROFILE"))
	started, cpuStarted := time.Now(), cpuTime()
	// As `visor pool apply` does: bounded concurrency, one listing. A start
	// the loaded server did not answer in time is applied again, as a user
	// re-runs the (idempotent) apply; how many is reported.
	// Only the pools not applied go again: re-applying all would query
	// every new pool still waiting for its first workflow task.
	retried, todo := 0, specs
	for pass := 0; ; pass++ {
		results, err := starter.ApplyPools(ctx, c, "default", todo, starter.ApplyOptions{Progress: applyProgress(b, started)})
		if err != nil {
			b.Fatal(err)
		}
		var failed []error
		var again []contract.PoolSpec
		for i, r := range results {
			if r.Err != nil {
				failed = append(failed, fmt.Errorf("%s: %w", r.Pool, r.Err))
			}
			if !r.Attempted || r.Err != nil {
				again = append(again, todo[i])
			}
		}
		retried += len(again)
		todo = again
		if len(todo) == 0 {
			break
		}
		if pass == 4 {
			b.Fatalf("apply still failing after %d passes: %v", pass+1, failed)
		}
		b.Logf("apply pass %d: %d pools failed (%v), %d to apply again", pass, len(failed), failed[:min(1, len(failed))], len(todo))
	}
	applied, applyCPU := time.Since(started), cpuTime()-cpuStarted
	stopProfile()
	b.Logf("applied %d pools in %s (%d pool applies repeated) [load %s]", n, applied.Round(time.Millisecond), retried, loadAverage())
	var registered time.Duration
	for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(2 * time.Second) {
		st, err := starter.ClusterStatus(ctx, c, "bench")
		if err == nil && len(st.Pools) == n {
			registered = time.Since(started)
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the cluster has %d of %d pools registered 30 min after the apply began (%v)", len(st.Pools), n, err)
		}
	}
	b.Logf("every pool registered with the cluster %s after the apply began [load %s]; settling %s", registered.Round(time.Second), loadAverage(), settle)
	time.Sleep(settle)
	// History growth is sampled on a few pools (reading every history
	// would itself cost CPU inside the window).
	var sample []string
	for i := 0; i < n; i += max(1, n/historySample) {
		sample = append(sample, key(i).WorkflowID())
	}
	b.ResetTimer()
	for range b.N {
		events0, bytes0 := historyOf(ctx, b, c, sample, nil)
		stopProfile := profileCPU(b, os.Getenv("VISOR_BENCH_IDLE_CPUPROFILE"))
		before := cpuTime()
		t0 := time.Now()
		time.Sleep(window)
		used := cpuTime() - before
		stopProfile()
		elapsed := time.Since(t0)
		// The machine is shared: the load beside the process's own CPU
		// says how contended the window was.
		b.Logf("idle window %s: process CPU %s [load %s]", elapsed.Round(time.Second), used.Round(time.Millisecond), loadAverage())
		b.ReportMetric(100*used.Seconds()/elapsed.Seconds(), "%core")
		b.ReportMetric(1e6*used.Seconds()/elapsed.Seconds()/float64(n), "µcore/pool")
		b.StopTimer()
		// What the window's events were says what kept the pools busy.
		pools, cluster := newWindowTally(t0, t0.Add(elapsed)), newWindowTally(t0, t0.Add(elapsed))
		events1, bytes1 := historyOf(ctx, b, c, sample, pools.add)
		historyOf(ctx, b, c, []string{types.ClusterWorkflowID("bench")}, cluster.add)
		// To stderr: a benchmark's own log is cut after its first lines.
		fmt.Fprintf(os.Stderr, "idle window %s, events of %d sampled pools: %s\n", elapsed.Round(time.Second), len(sample), pools)
		fmt.Fprintf(os.Stderr, "idle window %s, events of the cluster workflow: %s\n", elapsed.Round(time.Second), cluster)
		fmt.Fprintf(os.Stderr, "cluster workflow runs: %d since the start, %d begun in the window\n",
			runsOf(ctx, b, c, types.ClusterWorkflowID("bench"), time.Time{}), runsOf(ctx, b, c, types.ClusterWorkflowID("bench"), t0))
		if path := os.Getenv("VISOR_BENCH_CLUSTER_TIMELINE"); path != "" {
			writeTimeline(ctx, b, c, types.ClusterWorkflowID("bench"), path)
		}
		perDay := float64(24*time.Hour) / float64(elapsed) / float64(len(sample))
		b.ReportMetric(float64(events1-events0)*perDay, "history-events/pool-day")
		b.ReportMetric(float64(bytes1-bytes0)*perDay/1024, "history-KiB/pool-day")
		b.StartTimer()
	}
	b.ReportMetric(applied.Seconds(), "apply-s")
	b.ReportMetric(registered.Seconds(), "registered-s")
	// CPU the process spent while applying, per pool: the server's and
	// the worker's share of each start, what a loaded machine stretches.
	b.ReportMetric(1e3*applyCPU.Seconds()/float64(n), "apply-cpu-ms/pool")
	b.ReportMetric(float64(retried), "apply-repeats")
	b.ReportMetric(float64(residentBytes(b))/(1<<20), "RSS-MiB")
}

// residentBytes is the process's resident set now (VmRSS): the server,
// the worker with its sticky cache of every pool, and the fake cloud.
func residentBytes(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// historySample is how many idle pools' histories the benchmark reads.
const historySample = 20

// windowTally counts, by type, the events stamped within [from, to].
type windowTally struct {
	from, to time.Time
	count    map[string]int
}

func newWindowTally(from, to time.Time) *windowTally {
	return &windowTally{from: from, to: to, count: map[string]int{}}
}

func (w *windowTally) add(e *historypb.HistoryEvent) {
	if at := e.GetEventTime().AsTime(); at.Before(w.from) || at.After(w.to) {
		return
	}
	kind := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
	// A signal's name and, for an observation, why it was sent.
	if sig := e.GetWorkflowExecutionSignaledEventAttributes(); sig != nil {
		kind += "(" + sig.GetSignalName()
		if p := sig.GetInput().GetPayloads(); len(p) == 1 {
			var why struct {
				Reason string `json:"reason"`
			}
			if json.Unmarshal(p[0].GetData(), &why) == nil && why.Reason != "" {
				kind += " " + why.Reason
			}
		}
		kind += ")"
	}
	w.count[kind]++
}

func (w *windowTally) String() string {
	kinds := make([]string, 0, len(w.count))
	for k := range w.count {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%s %d", k, w.count[k]))
	}
	return strings.Join(out, ", ")
}

// runsOf counts the runs of workflow id begun at or after since, from
// visibility: each is a continue-as-new, and with it a restarted watcher.
func runsOf(ctx context.Context, b *testing.B, c client.Client, id string, since time.Time) int64 {
	q := fmt.Sprintf("WorkflowId = '%s'", id)
	if !since.IsZero() {
		q += fmt.Sprintf(" AND StartTime >= '%s'", since.UTC().Format(time.RFC3339Nano))
	}
	r, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
	if err != nil {
		b.Fatal(err)
	}
	return r.GetCount()
}

// writeTimeline writes every run of workflow id, one event a line (time,
// run, type, and a signal's name and payload), for reading what a
// cluster did over the whole benchmark.
func writeTimeline(ctx context.Context, b *testing.B, c client.Client, id, path string) {
	var runs []*workflowpb.WorkflowExecutionInfo
	var token []byte
	for {
		r, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id), NextPageToken: token})
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r.GetExecutions()...)
		if token = r.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	var out strings.Builder
	for _, run := range runs {
		it := c.GetWorkflowHistory(ctx, id, run.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			detail := ""
			if sig := e.GetWorkflowExecutionSignaledEventAttributes(); sig != nil {
				detail = sig.GetSignalName()
				if p := sig.GetInput().GetPayloads(); len(p) == 1 && len(p[0].GetData()) < 400 {
					detail += " " + string(p[0].GetData())
				}
			}
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				detail = a.GetActivityType().GetName()
			}
			if f := e.GetActivityTaskFailedEventAttributes(); f != nil {
				detail = f.GetFailure().GetMessage()
			}
			fmt.Fprintf(&out, "%s %s %d %s %s\n", e.GetEventTime().AsTime().Format("15:04:05.000"), run.GetExecution().GetRunId()[:8],
				e.GetEventId(), strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_"), detail)
		}
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// historyOf sums the events and encoded bytes of the pools' current runs,
// handing each event to visit when it is set.
func historyOf(ctx context.Context, b *testing.B, c client.Client, ids []string, visit func(*historypb.HistoryEvent)) (events, bytes int) {
	for _, id := range ids {
		it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			events++
			bytes += proto.Size(e)
			if visit != nil {
				visit(e)
			}
		}
	}
	return events, bytes
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
