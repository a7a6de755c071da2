package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/score"
)

type report struct {
	generated time.Time
	goVersion string
	cpus      int
	benchLog  string
	benches   []benchmark
	suite     suite
	plotDir   string
	scoreTime time.Duration
}

// areas are the speed figures the report names, each the benchmarks whose
// name contains one of the patterns.
var areas = []struct {
	title    string
	patterns []string
}{
	{"Sizing throughput (sizing.PlanScaleUp, sizing.Baseline)", []string{"BenchmarkPlanScaleUp", "BenchmarkBaseline"}},
	{"Decision latency (observe signal to decision, embedded server)", []string{"BenchmarkDecisionLatency"}},
	{"Idle-pool cost and history per pool-day (CPU of 1,000 idle pools on the embedded server; history growth of 20 of them)", []string{"BenchmarkIdlePools"}},
	{"Registration rate (`pool apply` of new pools: check once per cluster, bounded concurrency)", []string{"BenchmarkApplyPools"}},
	{"Metering", []string{"BenchmarkNodeHours"}},
	{"Observing a cluster", []string{"BenchmarkObserve"}},
	{"Scoring simulator (one policy over the compressed openb day)", []string{"BenchmarkSimulate"}},
}

func writeReport(b *bytes.Buffer, r report) {
	fmt.Fprintf(b, "# Benchmarks\n\nWritten by `make bench` (`go run ./internal/benchreport`) on %s with %s on %d CPUs. Do not edit by hand.\n\n",
		r.generated.Format("2006-01-02 15:04 MST"), r.goVersion, r.cpus)
	b.WriteString("## Speed and memory\n\n")
	if len(r.benches) == 0 {
		fmt.Fprintf(b, "No benchmark log at `%s`: run `make bench` for these figures.\n\n", r.benchLog)
	}
	used := map[int]bool{}
	for _, a := range areas {
		if len(r.benches) == 0 {
			break
		}
		fmt.Fprintf(b, "### %s\n\n", a.title)
		var rows []benchmark
		for i, bm := range r.benches {
			for _, p := range a.patterns {
				if strings.Contains(bm.Name, p) && !used[i] {
					rows, used[i] = append(rows, bm), true
				}
			}
		}
		if len(rows) == 0 {
			fmt.Fprintf(b, "Not measured: no benchmark matching %s in `%s`.\n\n", strings.Join(a.patterns, " or "), r.benchLog)
			continue
		}
		writeBenchTable(b, rows)
	}
	var rest []benchmark
	for i, bm := range r.benches {
		if !used[i] {
			rest = append(rest, bm)
		}
	}
	if len(rest) > 0 {
		b.WriteString("### Other benchmarks\n\n")
		writeBenchTable(b, rest)
	}
	writeScores(b, r)
}

func writeBenchTable(b *bytes.Buffer, rows []benchmark) {
	b.WriteString("| package | benchmark | runs | figures |\n|---|---|---:|---|\n")
	for _, bm := range rows {
		var figs []string
		for _, m := range bm.Metrics {
			figs = append(figs, fmt.Sprintf("%s %s", fmtValue(m.Value), m.Unit))
		}
		pkg := strings.TrimPrefix(bm.Pkg, "github.com/hanzoai/visor-fleet/")
		fmt.Fprintf(b, "| %s | %s | %d | %s |\n", pkg, strings.TrimPrefix(bm.Name, "Benchmark"), bm.N, strings.Join(figs, " · "))
	}
	b.WriteString("\n")
}

func fmtValue(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

func writeScores(b *bytes.Buffer, r report) {
	b.WriteString(`## Scoring the control law on demand traces

Package ` + "`score`" + ` replays each trace in simulated time (10 s steps) against four
policies on the same cluster model: nodes become Ready 60 s after they are asked
for; a first-fit scheduler binds pending pods onto ready nodes with room, with the
planner's placement rules (GPU pods on GPU nodes, other pods off them while a size
without GPUs holds them); scale-down drains (evicted pods are pending again and
placed at once where there is room) and deletes.

- **visor law**: ` + "`law.Decide`" + ` (the pool workflow's own pure law) fed as the workflow
  feeds it in a run recorded with its consolidation and node-hours rules
  (` + "`versionNodeHours`" + `: consolidation across sizes, the planner's ` + "`FewerNodes`" + `), sampling
  every ` + "`sampleInterval`" + `, and ` + "`sizing.PlanScaleUp`" + ` for each scale-up.
- **seed rule**: the same law without consolidation, with the HIP's numbers
  (` + "`types.HIPPolicy`" + `) and the seed's sizing
  (` + "`sizing.Baseline`" + `: sum of requests, smallest size that fits the largest pod, raw capacity).
- **cluster-autoscaler-like**: 10 s scan, scale-up by simulated fit (first-fit
  decreasing per size, least-waste size), scale-down of nodes under 50 % utilization
  whose pods fit elsewhere, unneeded for 10 min, not within 10 min of a scale-up.
- **lower bound**: per minute, the pods alive all that minute need at least the sum of
  their shares of the best size that admits them, in the dimension that needs most
  (fractional, so no policy serving every pod spends less); never below the floor.
- **offline packing**: per minute, those pods packed afresh by the real planner with
  no delay or cooldown (the issue's "fewest nodes of the cheapest fitting sizes");
  a heuristic, not a proof: an online policy buying a cheaper size for a small batch
  can beat it on cost.
- **nodes-first packing**: the same with the planner buying the fewest nodes
  (*sizingObjective: nodes*): what a clairvoyant that waits for no node and moves
  every pod every minute spends in node-hours (first-fit decreasing: a heuristic too).

*Beyond threshold* is each pod's total pending time less the pending threshold
(p50 / p99 / max over schedulable pods); *busy removals* are nodes removed while
above the pool's idle thresholds whose evicted pods did not all find room at once on
the nodes that stayed (neither idle nor unneeded; must be 0 for the law);
*evictions (stranded)* counts evicted pods, and in brackets those that found no room
and waited for a new node; the target is no pod
waiting longer than pending threshold + provisioning delay + one sample interval.
Under each table, where the law's and the cluster-autoscaler-like rule's node-hours
went: booting, on Ready nodes under 50 % used (the highest of CPU, memory and GPU
requests over allocatable), kept by the floor, and by size. The lower bound counts
each pod's share of the size that gives the most of what it needs, so on catalogs
whose larger sizes cost more per unit (the sim's sim-16c64g, AWS's multi-GPU g5)
node-hours and cost pull apart: the cheapest packing buys more, smaller nodes.

`)
	fmt.Fprintf(b, "The whole suite (5 traces × 6 policies, plus the variant sweep) took %s.\n\n", r.scoreTime.Round(100*time.Millisecond))
	for _, c := range r.suite.comparisons {
		fmt.Fprintf(b, "### %s\n\n", c.Trace)
		c.WriteTable(b)
		law := c.Law()
		verdict := "met"
		if law.MaxPending > c.PendingLimit() {
			verdict = "not met"
		}
		fmt.Fprintf(b, "\nvisor law: %.2f× the lower bound's node-hours and %.2f× its cost; %.2f× the offline packing's node-hours; longest wait %s against a target of %s (%s). The nodes-first packing itself uses %.2f× the lower bound's node-hours.\n\n",
			law.NodeHoursRatio, law.CostRatio, law.PackingNodeHoursRatio, law.MaxPending.Round(time.Second), c.PendingLimit(), verdict,
			c.Fewest.NodeHours/max(c.Bound.NodeHours, 1e-9))
		writeSpend(b, c)
		fmt.Fprintf(b, "![nodes and demand over time](%s/%s-nodes.svg)\n![pending time distribution](%s/%s-pending.svg)\n\n", r.plotDir, c.Trace, r.plotDir, c.Trace)
	}
	b.WriteString("### Policy variants of the law\n\nThe law alone with one policy field changed from the pool's policy, on the same traces and bounds. The HIP's numbers were a 10m cooldown after scale-down and one idle node per decision; the defaults now are 2m and every idle node. The node-hours rows score the law as a run recorded before `versionNodeHours` decides, and with each of its two rules alone. The allowedSizes rows let the law buy only some of the catalog's sizes, against the same bounds (every size's).\n\n")
	b.WriteString("| trace | variant | node-hours × bound | cost × bound | p99 beyond threshold | max pending | target | scale ops | busy removals |\n|---|---|---:|---:|---:|---:|---|---:|---:|\n")
	for _, v := range r.suite.variants {
		ok := "met"
		if v.s.MaxPending > v.limit {
			ok = "not met"
		}
		fmt.Fprintf(b, "| %s | %s | %.2f | %.2f | %s | %s | %s | %d | %d |\n", v.trace, v.variant, v.s.NodeHoursRatio, v.s.CostRatio,
			v.s.BeyondP99.Round(time.Second), v.s.MaxPending.Round(time.Second), ok, v.s.ScaleOps, v.s.BusyRemovals)
	}
	b.WriteString("\n")
}

// writeSpend says where the law's and the cluster-autoscaler-like rule's
// node-hours went.
func writeSpend(b *bytes.Buffer, c score.Comparison) {
	for _, r := range c.Runs {
		if r.Policy == "seed rule" || r.NodeHours == 0 {
			continue
		}
		sp := r.Spend
		sizes := make([]string, 0, len(sp.BySize))
		for name := range sp.BySize {
			sizes = append(sizes, name)
		}
		sort.Slice(sizes, func(i, j int) bool { return sp.BySize[sizes[i]] > sp.BySize[sizes[j]] })
		var parts []string
		for _, name := range sizes {
			parts = append(parts, fmt.Sprintf("%s %.0f", name, sp.BySize[name]))
		}
		fmt.Fprintf(b, "%s node-hours: %.0f%% booting, %.0f%% on Ready nodes under 50%% used (%.0f%% kept by the floor); by size: %s.\n\n",
			r.Policy, 100*sp.Booting/r.NodeHours, 100*sp.Underused/r.NodeHours, 100*sp.Floor/r.NodeHours, strings.Join(parts, ", "))
	}
}
