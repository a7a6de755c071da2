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
	// keptSpeed, when set, is the speed section of the previous report,
	// written again as it was (-scores-only).
	keptSpeed string
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
	{"A pool's workflow task in a burst (an observation folded, purchases judged, the law's decision; under the SDK's deadlock check)", []string{"BenchmarkBurstObserveAndDecide"}},
	{"Scoring simulator (one policy over the compressed openb day)", []string{"BenchmarkSimulate"}},
	{"A consolidation decision over 1,500 nodes (law.Decide; removals packed node by node, and for any scheduler order: PackAnyOrder)", []string{"BenchmarkConsolidateLargePool"}},
}

func writeReport(b *bytes.Buffer, r report) {
	fmt.Fprintf(b, "# Benchmarks\n\nWritten by `make bench` (`go run ./cmd/benchreport`) on %s with %s on %d CPUs. Do not edit by hand.\n\n",
		r.generated.Format("2006-01-02 15:04 MST"), r.goVersion, r.cpus)
	if r.keptSpeed != "" {
		b.WriteString(r.keptSpeed)
		writeScores(b, r)
		return
	}
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

Package ` + "`score`" + ` replays each trace in simulated time (10 s steps) against five
policies on the same cluster model: nodes become Ready 60 s after they are asked
for; a first-fit scheduler binds pending pods onto ready nodes with room, with the
planner's placement rules (GPU pods on GPU nodes, other pods off them while a size
without GPUs holds them); scale-down drains (evicted pods are pending again and
placed at once where there is room) and deletes; a replacement cordons the old
nodes, and drains them once the one new node is Ready; a pod marked not evictable
(a PodDisruptionBudget that allows nothing, do-not-disrupt) pins its node.

- **visor law**: ` + "`law.Decide`" + ` (the pool workflow's own pure law) fed as the workflow
  feeds it, with every rule of ` + "`law.AllRules`" + ` (consolidation, consolidation across
  sizes, the planner's ` + "`FewerNodes`" + `, replacement consolidation: one strictly cheaper
  node bought for underused ones, drained once it is Ready and holds their pods;
  pending pods batched as Karpenter does, 1 s idle, 10 s max), sampling
  every ` + "`sampleInterval`" + `, and ` + "`sizing.PlanScaleUp`" + ` for each scale-up.
- **seed rule**: the same law without consolidation, with the HIP's numbers
  (` + "`types.HIPPolicy`" + `) and the seed's sizing
  (` + "`sizing.Baseline`" + `: sum of requests, smallest size that fits the largest pod, raw capacity).
- **cluster-autoscaler-like**: 10 s scan, scale-up by simulated fit (first-fit
  decreasing per size, least-waste size), scale-down of nodes under 50 % utilization
  whose pods fit elsewhere, unneeded for 10 min, not within 10 min of a scale-up.
- **karpenter-like**: Karpenter v1's documented behaviour (WhenEmptyOrUnderutilized,
  consolidateAfter 0, budget 10 % of nodes): pending pods batched (1 s idle, 10 s
  max), scheduled first-fit decreasing onto the nodes there are and then onto
  NodeClaims that each launch the cheapest size holding all their pods; every 10 s
  the first of emptiness, multi-node (up to 100 candidates, binary search on how
  many) and single-node consolidation that finds a command: delete when the pods fit
  on Ready nodes, else replace by one strictly cheaper node. It keeps the pool's floor;
  it does not model spot, zones, drift, the 15 s validation wait, or a second
  consolidation while a replacement boots.
- **LP bound**: per minute, the LP relaxation of the configuration model of the pods
  alive all that minute (patterns of pods one node of a size holds, over CPU, memory,
  GPU devices, pod slots and ephemeral storage), solved by column generation (master
  LP by gonum's simplex, patterns by a branch-and-bound knapsack); what it reports is
  the Farley bound of the last duals (the LP optimum once no pattern has negative
  reduced cost), so it is a proof however far the column generation got, and never
  below the fractional bound; never below the floor.
- **lower bound** (fractional): per minute, the pods alive all that minute need at
  least the sum of their shares of the best size that admits them, in the dimension
  that needs most.
- **offline packing**: per minute, those pods packed afresh by the real planner with
  no delay or cooldown; a heuristic, not a proof.
- **nodes-first packing**: the same with the planner buying the fewest nodes
  (*sizingObjective: nodes*).

*Wait* is each schedulable pod's total pending time (p50 / p99 / max);
*beyond threshold* is that less the pending threshold; *busy removals* are nodes
removed while above the pool's idle thresholds whose evicted pods did not all find
room at once on the nodes that stayed (must be 0 for the law); *evictions (stranded)*
counts evicted pods, and in brackets those that found no room and waited for a new
node; *replacements* counts nodes (one or several at once) replaced by one new node.
Under each table: the law's targets, and where the law's and the peers' node-hours
went (booting, on Ready nodes under 50 % used, kept by the floor, by size).

`)
	fmt.Fprintf(b, "The whole suite (5 traces × 8 policies and bounds, plus the variant sweep) took %s.\n\n", r.scoreTime.Round(100*time.Millisecond))
	for _, c := range r.suite.comparisons {
		fmt.Fprintf(b, "### %s\n\n", c.Trace)
		c.WriteTable(b)
		b.WriteString("\nTargets for the visor law:\n\n")
		for _, t := range c.Targets() {
			verdict := "met"
			if !t.Met {
				verdict = "**not met**"
			}
			fmt.Fprintf(b, "- %s: %s (%s)\n", t.Name, verdict, t.Detail)
		}
		b.WriteString("\n")
		writeSpend(b, c)
		fmt.Fprintf(b, "![nodes, hourly cost and demand over time](%s/%s-nodes.svg)\n![pending time distribution](%s/%s-pending.svg)\n\n", r.plotDir, c.Trace, r.plotDir, c.Trace)
	}
	b.WriteString("### Policy variants of the law\n\nThe law alone with one policy field changed from the pool's policy, on the same traces and bounds; each trace's rows end with the peer rules as they ran. The HIP's numbers were a 10m cooldown after scale-down and one idle node per decision; the defaults now are 30s and every idle node, and a written policy consolidates every node whose pods fit elsewhere after 2m (consolidationThreshold 1; a zero recorded before reads as 0.7 and 5m). Each “without” row is the law with every rule of a new pool run but the one named: the node-hours rows without its two node-hours rules (`law.Rules` AcrossSizes and FewerNodes), and with each alone; the Replace and Batch rows without replacement consolidation and without batching (the row without both is a run recorded before `versionReplace` and `versionBatch`, with no later rule either); the ReplaceGPU row without GPU replacement (`law-replace-gpu`); the LookAhead row without look-ahead sizing (`look-ahead`: a scale-up sizes for the pods pending and the demand the pool runs), the ReplaceAtRate row without `replace-at-rate` (a replacement buys no size dearer per unit than the nodes it replaces), and a row without both; the PackIdle rows judge idle nodes by sums of requests, as before `pack-idle`, with the pool's policy and under idle-only; the PackAnyOrder rows pack a decision's removals node by node into the room the law counted for each, as before `pack-any-order` (with the cooldown after scale-down at 2m, the default before it, and at today's 30s), and the law with it at 2m; the informers row runs the law on a cluster whose watcher signals the pool within a second of a pod becoming unschedulable or scheduled, or a node joining, leaving or becoming Ready (`score.Options.WatchEvents`, a cluster spec's `informers: true`), instead of hearing of it only at each 30 s sample: the reaction time that is the law's own (with and without `fresh-scale-down`, which has a scale-down older than 5 s look again first); on the synthetic traces the pre-warm row adds predictive pre-warm (below). The allowedSizes rows let the law buy only some of the catalog's sizes, against the same bounds (every size's).\n\n")
	b.WriteString("| trace | variant | cost $ | cost × LP bound | cost × karpenter-like | node-hours × fractional | wait p99 | max pending | scale ops | busy removals | stranded | replacements | interruptions (pods disrupted) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range r.suite.variants {
		fmt.Fprintf(b, "| %s | %s | %.2f | %.3f | %.2f | %.2f | %s | %s | %d | %d | %d | %d | %d (%d) |\n", v.trace, v.variant, v.s.Cost, v.s.LPCostRatio, v.s.KarpenterCostRatio,
			v.s.NodeHoursRatio, v.s.WaitP99.Round(time.Second), v.s.MaxPending.Round(time.Second), v.s.ScaleOps, v.s.BusyRemovals, v.s.Stranded, v.s.Replacements,
			v.s.Interruptions, v.s.Disrupted)
	}
	b.WriteString("\n")
	writeSpotSaving(b, r.suite.spot)
	writePrewarm(b, r.suite.prewarm)
	writeUnseen(b, r.suite.unseen)
}

// writeUnseen is the law's peer targets on traces and provisioning delays
// the suite's comparisons do not use.
func writeUnseen(b *bytes.Buffer, cmps []score.Comparison) {
	if len(cmps) == 0 {
		return
	}
	b.WriteString("### Traces and provisioning delays the suite does not know\n\nThe targets that need no bound, on the synthetic generators with other seeds and on the openb day with other provisioning delays: the law as a new pool runs it, with the pool's policy as given, against the two peer rules on the same cluster model. Nothing of the law was chosen on these runs.\n\n")
	b.WriteString("| trace | provisioning delay | cost × karpenter-like | wait p99 (target) | longest wait (cluster-autoscaler-like's) | busy removals, stranded | targets met |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range cmps {
		law, ca := c.Law(), c.Named(score.ClusterAutoscalerLike)
		ts := c.PeerTargets()
		met := 0
		for _, t := range ts {
			if t.Met {
				met++
			}
		}
		delay := c.Options.ProvisioningDelay
		fmt.Fprintf(b, "| %s | %s | %.3f | %s (%s) | %s (%s) | %d, %d | %d of %d |\n", c.Trace, delay, law.KarpenterCostRatio,
			law.WaitP99.Round(time.Second), delay+20*time.Second, law.MaxPending.Round(time.Second), ca.MaxPending.Round(time.Second),
			law.BusyRemovals, law.Stranded, met, len(ts))
	}
	b.WriteString("\n")
}

// writePrewarm is each synthetic trace's law with predictive pre-warm
// against the law without it, with the forecast's error and the cost.
func writePrewarm(b *bytes.Buffer, rows []prewarmRow) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Predictive pre-warm\n\nThe law with `law.Rules.Prewarm` against the law as it ran in the comparison. Its demand model (`law.DemandModel`: the peak requests of each 10-minute slot of the day and of the week, blended over the days seen) first learns two earlier days of the same trace generator (other seeds), then each observation of the run; a pre-warm buys, a provisioning delay and a sample interval ahead, room for the demand it expects beyond the Ready nodes' (stand-in pods of the pool's typical shape, discounted by the model's own error), and holds back a removal that would leave less than the forecast; it never removes a node on a forecast. *Forecast error* is the model's CPU error over the run's slots (|forecast − peak| / peak, summed); a pre-warm *came true* when the peak reached 80 % of its forecast within two slots. The openb traces have no second day to learn from and are not pre-warmed.\n\n")
	b.WriteString("| trace | cost $ without / with | extra cost | wait p90 without / with | wait p99 without / with | max pending without / with | p90 below the provisioning delay | forecast error | pre-warm scale-ups (stand-in pods) | came true / not |\n|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n")
	for _, r := range rows {
		extra := 0.0
		if r.law.Cost > 0 {
			extra = r.with.Cost/r.law.Cost - 1
		}
		below := "no"
		if r.with.WaitP90 < r.delay {
			below = "yes"
		}
		fmt.Fprintf(b, "| %s | %.2f / %.2f | %+.1f %% | %s / %s | %s / %s | %s / %s | %s (%s) | %.1f %% | %d (%d) | %d / %d |\n", r.trace, r.law.Cost, r.with.Cost, 100*extra,
			r.law.WaitP90.Round(time.Second), r.with.WaitP90.Round(time.Second), r.law.WaitP99.Round(time.Second), r.with.WaitP99.Round(time.Second),
			r.law.MaxPending.Round(time.Second), r.with.MaxPending.Round(time.Second), below, r.delay, 100*r.stats.ForecastError,
			r.stats.ScaleUps, r.stats.Pods, r.stats.Hits, r.stats.Misses)
	}
	b.WriteString("\n")
}

// writeSpotSaving is each trace's [spot, on-demand] pool against the same
// law bought on demand.
func writeSpotSaving(b *bytes.Buffer, rows []spotRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "### Spot: [spot, on-demand] against on-demand\n\nThe spot row of the variant table beside the law on demand (the comparison's own run). The spot model (`score.Spot`): every node is bought as spot (spot capacity never runs out here, so on-demand is never the fallback), at the catalog's cheapest spot offering of its size or %.2f× its on-demand price where the catalog has none; each node is interrupted after an exponential time at %.2f per node-hour (seeded; a pessimistic rate, about one interruption per node every two days); on the 2-minute notice the pool buys a replacement of the same size and drains the node at once, as the workflow does, and its pods wait for room like any pending pod. The bounds stay on-demand priced, so the spot rows' ratios to them fall below 1. Capacity exhaustion and the on-demand fallback are not modelled.\n\n", rows[0].factor, rows[0].interval)
	b.WriteString("| trace | on-demand cost $ | [spot, on-demand] cost $ | saving | interruptions | pods disrupted | wait p99 on-demand / spot | max pending on-demand / spot |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		saving := 0.0
		if r.onDemand.Cost > 0 {
			saving = 1 - r.spot.Cost/r.onDemand.Cost
		}
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.1f %% | %d | %d | %s / %s | %s / %s |\n", r.trace, r.onDemand.Cost, r.spot.Cost, 100*saving,
			r.spot.Interruptions, r.spot.Disrupted, r.onDemand.WaitP99.Round(time.Second), r.spot.WaitP99.Round(time.Second),
			r.onDemand.MaxPending.Round(time.Second), r.spot.MaxPending.Round(time.Second))
	}
	b.WriteString("\n")
}

// writeSpend says where the law's and the peer rules' node-hours went.
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

// speedSection is the speed part of a report this command wrote: from its
// "## Speed and memory" heading up to the scores.
func speedSection(report string) (string, error) {
	const speed, scores = "## Speed and memory\n", "## Scoring the control law"
	i := strings.Index(report, speed)
	j := strings.Index(report, scores)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q section before %q to keep", strings.TrimSpace(speed), scores)
	}
	return report[i:j], nil
}
