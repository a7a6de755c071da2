package pgtemporal_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite/pgtemporal"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

// BenchmarkPoolRatesOnPostgres measures what a pool costs the Temporal
// cluster per pool-hour, idle and busy, with the production policy
// defaults, on a Temporal server persisting to PostgreSQL: workflow tasks,
// timers, signals, activities, updates and history bytes from each pool's
// own history, and PostgreSQL commits for the whole run. docs/scale.md is
// built on these figures. It runs one window (VISOR_RATES_WINDOW, default
// 6m, longer than the 5 min resync) whatever b.N is, with
// VISOR_RATES_IDLE (40) idle and VISOR_RATES_BUSY (10) busy pools; 0 and 0
// is the baseline (the server and the cluster workflow alone):
//
//	go test -run '^$' -bench PoolRatesOnPostgres -benchtime 1x -timeout 30m ./testsuite/pgtemporal/
func BenchmarkPoolRatesOnPostgres(b *testing.B) {
	window := 6 * time.Minute
	if v := os.Getenv("VISOR_RATES_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("VISOR_RATES_WINDOW: %v", err)
		}
		window = d
	}
	idlePools, busyPools := envInt(b, "VISOR_RATES_IDLE", 40), envInt(b, "VISOR_RATES_BUSY", 10)
	const cluster = "sim-rates"
	pg := pgtemporal.StartPostgres(b)
	srv := pgtemporal.StartTemporal(b, pg, "visor")
	c, err := srv.Dial()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := starter.EnsureSearchAttributes(ctx, c, srv.Namespace); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the frontend's namespace cache picks them up

	spec := starter.SpecFile{Clusters: []contract.ClusterDeclared{{ID: cluster, Provider: "sim", Phase: contract.PhaseActive, Region: "us-east"}}}
	pod := types.Resources{MilliCPU: 900, Memory: types.GiB}
	add := func(class string, n int, demand starter.DemoDemand) {
		for i := range n {
			key := types.PoolKey{Org: "bench", Project: class, Service: fmt.Sprintf("svc-%02d", i), Provider: "sim", Cluster: cluster}
			spec.Pools = append(spec.Pools, starter.PoolEntry{PoolSpec: contract.PoolSpec{Key: key, Policy: types.Policy{}.WithDefaults()}, Demo: &demand})
		}
	}
	// Idle: one pod on the floor's two nodes, nothing ever pending.
	add("idle", idlePools, starter.DemoDemand{Shape: "steady", Pods: 1, Requests: pod})
	// Busy: a burst of 12 pods every 4 minutes for 90 s.
	add("busy", busyPools, starter.DemoDemand{Shape: "burst", Pods: 2, BurstPods: 12,
		Period: types.Duration(4 * time.Minute), BurstFor: types.Duration(90 * time.Second), Requests: pod})

	dir := b.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fleet, err := devfleet.New(spec, devfleet.Options{ProvisionDelay: 5 * time.Second, Logger: quiet, TokenDir: filepath.Join(dir, "tokens")})
	if err != nil {
		b.Fatal(err)
	}
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	fleet.Run(simCtx, time.Second)
	ledger, err := meterledger.Open(filepath.Join(dir, "meter.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ledger.Close()
	w := workers.New(c, contract.DefaultTaskQueue, &activities.Activities{Clusters: fleet.Clusters, Temporal: c, Meter: ledger}, worker.Options{})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	if err := devstack.Register(ctx, c, srv.Namespace, spec, filepath.Join(dir, "tokens")); err != nil {
		b.Fatal(err)
	}
	// Past registration and the first samples, into the steady state.
	time.Sleep(90 * time.Second)

	ids := []string{"cluster/" + cluster}
	for _, p := range spec.Pools {
		ids = append(ids, p.Key.WorkflowID())
	}
	runs0 := currentRuns(b, c, ids)
	commits0 := pgCommits(b, pg)
	t0 := time.Now()
	b.ResetTimer()
	time.Sleep(window)
	b.StopTimer()
	t1 := time.Now()
	commits1 := pgCommits(b, pg)
	runs1 := currentRuns(b, c, ids)

	classes := map[string]*tally{}
	for _, id := range ids {
		class := "cluster"
		if strings.HasPrefix(id, "pool/bench/idle/") {
			class = "idle"
		} else if strings.HasPrefix(id, "pool/bench/busy/") {
			class = "busy"
		}
		if classes[class] == nil {
			classes[class] = &tally{events: map[string]int{}, activities: map[string]int{}}
		}
		tl := classes[class]
		tl.workflows++
		seen := map[string]bool{}
		for _, run := range []string{runs0[id], runs1[id]} {
			if seen[run] {
				continue
			}
			seen[run] = true
			tl.count(b, c, id, run, t0, t1)
		}
		if runs0[id] != runs1[id] {
			tl.continuedAsNew++
		}
	}
	hours := t1.Sub(t0).Hours()
	for _, class := range []string{"idle", "busy", "cluster"} {
		tl := classes[class]
		if tl == nil {
			continue
		}
		per := func(n int) float64 { return float64(n) / float64(tl.workflows) / hours }
		unit := class + "-%s/wf-h"
		if class != "cluster" {
			unit = class + "-%s/pool-h"
		}
		b.ReportMetric(per(tl.events["WorkflowTaskCompleted"]), fmt.Sprintf(unit, "wft"))
		b.ReportMetric(per(tl.events["TimerStarted"]), fmt.Sprintf(unit, "timers"))
		b.ReportMetric(per(tl.events["WorkflowExecutionSignaled"]), fmt.Sprintf(unit, "signals"))
		b.ReportMetric(per(tl.events["ActivityTaskScheduled"]), fmt.Sprintf(unit, "activities"))
		b.ReportMetric(per(tl.events["WorkflowExecutionUpdateAccepted"]), fmt.Sprintf(unit, "updates"))
		b.ReportMetric(per(tl.total), fmt.Sprintf(unit, "events"))
		b.ReportMetric(per(tl.bytes), fmt.Sprintf(unit, "histB"))
		b.Logf("%s: %d workflows, %d history events in all (%d in the window), %d continued-as-new in the window; events by type per workflow-hour: %s; activities: %s",
			class, tl.workflows, tl.lifetime, tl.total, tl.continuedAsNew, tl.rates(tl.events, hours), tl.rates(tl.activities, hours))
	}
	b.ReportMetric(float64(commits1-commits0)/t1.Sub(t0).Seconds(), "pg-commits/s")
	if pools := float64(idlePools + busyPools); pools > 0 {
		b.ReportMetric(float64(commits1-commits0)/pools/hours, "pg-commits/pool-h")
	}
	b.Logf("window %s, %d idle + %d busy pools on 1 cluster, PostgreSQL commits %d (%.1f/s)",
		t1.Sub(t0).Round(time.Second), idlePools, busyPools, commits1-commits0, float64(commits1-commits0)/t1.Sub(t0).Seconds())
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// tally counts one class's history events inside the window.
type tally struct {
	workflows, continuedAsNew, total, bytes int
	lifetime                                int // events since each run started, window or not
	events, activities                      map[string]int
}

func (tl *tally) count(b *testing.B, c client.Client, id, run string, t0, t1 time.Time) {
	it := c.GetWorkflowHistory(context.Background(), id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			b.Fatalf("history of %s/%s: %v", id, run, err)
		}
		tl.lifetime++
		at := e.GetEventTime().AsTime()
		if at.Before(t0) || at.After(t1) {
			continue
		}
		tl.total++
		tl.bytes += proto.Size(e)
		tl.events[e.GetEventType().String()]++
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			tl.activities[a.GetActivityType().GetName()]++
		}
	}
}

func (tl *tally) rates(m map[string]int, hours float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, float64(m[k])/float64(tl.workflows)/hours))
	}
	return strings.Join(parts, ", ")
}

func currentRuns(b *testing.B, c client.Client, ids []string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil {
			b.Fatalf("describe %s: %v", id, err)
		}
		out[id] = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	return out
}

// pgCommits is PostgreSQL's committed transactions in Temporal's two databases.
func pgCommits(b *testing.B, pg *pgtemporal.Postgres) int64 {
	n, err := pg.QueryInt("postgres", "SELECT sum(xact_commit)::bigint FROM pg_stat_database WHERE datname IN ('temporal', 'temporal_visibility')")
	if err != nil {
		b.Fatal(err)
	}
	return n
}
