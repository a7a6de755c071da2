package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
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
	srv, err := devserver.Start(ctx, devserver.Options{Memory: true, GRPCPort: testsuite.FreePort(b), UIPort: -1, LogLevel: "error",
		SearchAttributes: starter.SearchAttributeTypes(), LogFile: os.DevNull})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop() })
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
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
// pools registered, over one full safety-resync interval, and how fast an
// idle pool's history grows (events and bytes, per pool-day).
func BenchmarkIdlePools(b *testing.B) {
	n := 1000
	window := 6 * time.Minute
	if v := os.Getenv("VISOR_BENCH_IDLE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		window = d
	}
	cloud := newInstantCloud()
	c := startServer(b, cloud)
	ctx := context.Background()
	if _, _, err := starter.EnrollCluster(ctx, c, contract.ClusterDeclared{ID: "bench", Provider: "sim", Phase: contract.PhaseActive}, ""); err != nil {
		b.Fatal(err)
	}
	p := types.DefaultPolicy()
	p.MinNodes = 0
	started := time.Now()
	for i := range n {
		key := types.PoolKey{Org: fmt.Sprintf("org%d", i%50), Project: "idle", Service: fmt.Sprintf("svc%d", i), Provider: "sim", Cluster: "bench"}
		if _, err := starter.ApplyPool(ctx, c, contract.PoolSpec{Key: key, Policy: p}, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("registered %d pools in %s", n, time.Since(started).Round(time.Millisecond))
	time.Sleep(time.Minute) // let start-up work drain
	// History growth is sampled on a few pools (reading 1,000 histories
	// would itself cost CPU inside the window).
	var sample []string
	for i := 0; i < n; i += n / historySample {
		sample = append(sample, types.PoolKey{Org: fmt.Sprintf("org%d", i%50), Project: "idle", Service: fmt.Sprintf("svc%d", i), Provider: "sim", Cluster: "bench"}.WorkflowID())
	}
	b.ResetTimer()
	for range b.N {
		events0, bytes0 := historyOf(ctx, b, c, sample)
		before := cpuTime()
		t0 := time.Now()
		time.Sleep(window)
		used := cpuTime() - before
		elapsed := time.Since(t0)
		b.ReportMetric(100*used.Seconds()/elapsed.Seconds(), "%core")
		b.StopTimer()
		events1, bytes1 := historyOf(ctx, b, c, sample)
		perDay := float64(24*time.Hour) / float64(elapsed) / float64(len(sample))
		b.ReportMetric(float64(events1-events0)*perDay, "history-events/pool-day")
		b.ReportMetric(float64(bytes1-bytes0)*perDay/1024, "history-KiB/pool-day")
		b.StartTimer()
	}
}

// historySample is how many idle pools' histories the benchmark reads.
const historySample = 20

// historyOf sums the events and encoded bytes of the pools' current runs.
func historyOf(ctx context.Context, b *testing.B, c client.Client, ids []string) (events, bytes int) {
	for _, id := range ids {
		it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			events++
			bytes += proto.Size(e)
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
