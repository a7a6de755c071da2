package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// benchPools is how many pools one apply registers (VISOR_BENCH_POOLS).
func benchPools(b *testing.B) int {
	if v := os.Getenv("VISOR_BENCH_POOLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("VISOR_BENCH_POOLS=%q is not a positive count", v)
		}
		return n
	}
	return 1000
}

// BenchmarkApplyPools measures `pool apply` of a file of new pools on the
// in-process server: the whole-file check (once per cluster) plus the
// bounded-concurrency apply. Reported as pools/s and seconds per file.
// With VISOR_BENCH_REAPPLY=1 it then waits for the pools to settle and
// applies the same file again (every pool unchanged). Until the pool
// workflow writes contract.MemoPolicyHash, that pass queries every pool,
// and 1,000 busy pools answer slower than the query timeout.
//
//	VISOR_BENCH_POOLS=1000 go test -run '^$' -bench ApplyPools -benchtime 1x ./cmd/visor
func BenchmarkApplyPools(b *testing.B) {
	n := benchPools(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	policy := types.DefaultPolicy()
	policy.MinNodes = 0 // no node to buy: the benchmark measures registering
	var newSecs, unchangedSecs float64
	for i := 0; b.Loop(); i++ {
		entries := make([]starter.PoolEntry, n)
		specs := make([]contract.PoolSpec, n)
		for j := range entries {
			key := types.PoolKey{Org: "bench", Project: fmt.Sprintf("run%d", i), Service: fmt.Sprintf("svc%d", j), Provider: "sim", Cluster: "sim-cli"}
			specs[j] = contract.PoolSpec{Key: key, Policy: policy}
			entries[j].PoolSpec = specs[j]
		}
		passes := []starter.ApplyResult{starter.PoolCreated}
		if os.Getenv("VISOR_BENCH_REAPPLY") == "1" {
			passes = append(passes, starter.PoolUnchanged)
		}
		for pass, want := range passes {
			if pass == 1 {
				// Re-applying a file happens later, not while its pools
				// run their first workflow tasks: let them settle, untimed.
				b.StopTimer()
				settle(ctx, b, fmt.Sprintf("run%d", i), n)
				b.StartTimer()
			}
			start := time.Now()
			if err := starter.CheckApply(ctx, env.client, "bench.yaml", entries, starter.ApplyRules{}); err != nil {
				b.Fatal(err)
			}
			results, err := starter.ApplyPools(ctx, env.client, env.namespace, specs, starter.ApplyOptions{Concurrency: benchConcurrency()})
			if err != nil {
				b.Fatal(err)
			}
			took := time.Since(start).Seconds()
			b.Logf("pass %d: %d pools in %.2fs", pass, n, took)
			for _, r := range results {
				if r.Err != nil || r.Result != want {
					b.Fatalf("pass %d: %s: %v %v, want %s", pass, r.Pool, r.Result, r.Err, want)
				}
			}
			if pass == 0 {
				newSecs += took
			} else {
				unchangedSecs += took
			}
		}
	}
	runs := float64(b.N)
	b.ReportMetric(float64(n)*runs/newSecs, "new-pools/s")
	b.ReportMetric(newSecs/runs, "s/new-file")
	if unchangedSecs > 0 {
		b.ReportMetric(float64(n)*runs/unchangedSecs, "unchanged-pools/s")
		b.ReportMetric(unchangedSecs/runs, "s/unchanged-file")
	}
}

// settle waits until every pool of the run has published a state past
// "starting" (its first workflow tasks are done), so the unchanged pass
// measures apply, not the server's backlog of new pools.
func settle(ctx context.Context, b *testing.B, project string, n int) {
	start := time.Now()
	for {
		pools, err := starter.ListPools(ctx, env.client, env.namespace, starter.PoolFilter{Org: "bench", Project: project})
		if err != nil {
			b.Fatal(err)
		}
		settled := 0
		for _, p := range pools {
			if p.State != "" && p.State != contract.StateStarting {
				settled++
			}
		}
		if settled == n {
			b.Logf("%d new pools settled in %s", n, time.Since(start).Round(time.Second))
			return
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d pools settled in 10 min", settled, n)
		}
		time.Sleep(time.Second)
	}
}

// benchConcurrency is VISOR_BENCH_CONCURRENCY, else the default.
func benchConcurrency() int {
	n, _ := strconv.Atoi(os.Getenv("VISOR_BENCH_CONCURRENCY"))
	return n
}
