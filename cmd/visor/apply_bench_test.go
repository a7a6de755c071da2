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
// in-process server, then of the same file again (every pool unchanged):
// the whole-file check (once per cluster) plus the bounded-concurrency
// apply. Reported as pools/s and seconds per file.
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
		for pass, want := range []starter.ApplyResult{starter.PoolCreated, starter.PoolUnchanged} {
			if pass == 1 {
				// Re-applying a file happens later, not while its pools
				// run their first workflow tasks: let them settle, untimed.
				b.StopTimer()
				time.Sleep(benchSettle)
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
	b.ReportMetric(float64(n)*runs/unchangedSecs, "unchanged-pools/s")
	b.ReportMetric(unchangedSecs/runs, "s/unchanged-file")
}

// benchSettle is how long the new pools get before the unchanged pass.
const benchSettle = 10 * time.Second

// benchConcurrency is VISOR_BENCH_CONCURRENCY, else the default.
func benchConcurrency() int {
	n, _ := strconv.Atoi(os.Getenv("VISOR_BENCH_CONCURRENCY"))
	return n
}
