package score

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Score is one row of the table: a run measured against the bounds and
// the peer rules.
type Score struct {
	Policy    string
	NodeHours float64
	Cost      float64
	// LPCostRatio is cost over the LP bound's; NodeHoursRatio and
	// CostRatio are to the fractional bound.
	LPCostRatio               float64
	NodeHoursRatio, CostRatio float64
	// Ratios to the offline packing's node-hours and cost.
	PackingNodeHoursRatio, PackingCostRatio float64
	// KarpenterCostRatio and CACostRatio are cost over the
	// karpenter-like and cluster-autoscaler-like rules' costs.
	KarpenterCostRatio, CACostRatio float64
	// WaitP50 and WaitP99 are quantiles of each schedulable pod's total
	// pending time; MaxPending the longest.
	WaitP50, WaitP99, MaxPending time.Duration
	// WaitP90 is the 90th percentile (the pre-warm target's).
	WaitP90 time.Duration
	// Pending time beyond the pending threshold over schedulable pods.
	BeyondP50, BeyondP99, BeyondMax time.Duration
	PodMinutesPending               float64
	ScaleOps                        int
	BusyRemovals                    int
	Evictions                       int
	Stranded                        int
	Replacements                    int
	StillPending                    int
	Unfit                           int
	// Interruptions and Disrupted: spot nodes taken back and the pods
	// they held (the spot variant only).
	Interruptions, Disrupted int
}

// Comparison is every policy run on one trace, with the bounds.
type Comparison struct {
	Trace       string
	Source      string
	Pods        int
	Fingerprint string
	Policy      types.Policy
	Options     Options
	// LP is the configuration model's LP bound (LPBound), Bound the
	// fractional one; Packing the planner's offline packing.
	LP      Run
	Bound   Run
	Packing Run
	// Fewest is the nodes-first offline packing (NodesFirstPacking).
	Fewest Run
	Runs   []Run
	Scores []Score
	// IntegralCost is the best integral packing found each minute (the LP
	// bound's rounding or either offline packing), over the trace: the LP
	// bound's gap is LP.Cost against it.
	IntegralCost float64
}

// Policy names of the peer rules the scores are measured against.
const (
	KarpenterLike         = "karpenter-like"
	ClusterAutoscalerLike = "cluster-autoscaler-like"
)

// Compare runs the pool's law, the seed rule, the cluster-autoscaler-like
// and karpenter-like rules and the bounds on the same trace and catalog.
func Compare(tr Trace, catalog []types.InstanceType, policy types.Policy, opt Options) (Comparison, error) {
	return compare(tr, catalog, policy, opt, true)
}

// ComparePeers runs the pool's law and the two peer rules on a trace,
// without the bounds: enough for PeerTargets, at a fraction of Compare's
// time (the report's traces and delays the suite does not know).
func ComparePeers(tr Trace, catalog []types.InstanceType, policy types.Policy, opt Options) (Comparison, error) {
	return compare(tr, catalog, policy, opt, false)
}

func compare(tr Trace, catalog []types.InstanceType, policy types.Policy, opt Options, bounds bool) (Comparison, error) {
	if err := policy.Validate(); err != nil {
		return Comparison{}, err
	}
	opt = opt.withDefaults()
	cmp := Comparison{Trace: tr.Name, Source: tr.Source, Pods: len(tr.Pods), Fingerprint: tr.Fingerprint(), Policy: policy, Options: opt}
	ctls := []Controller{NewLaw("visor law", policy, catalog), NewClusterAutoscaler(policy, catalog), NewKarpenter(policy, catalog)}
	if bounds {
		cmp.LP = LPBound(tr, catalog, policy, opt.SeriesEvery)
		cmp.Bound = LowerBound(tr, catalog, policy, opt.SeriesEvery)
		cmp.Packing = OfflinePacking(tr, catalog, policy, opt.SeriesEvery)
		cmp.Fewest = NodesFirstPacking(tr, catalog, policy, opt.SeriesEvery)
		cmp.IntegralCost = bestIntegral(cmp.LP, cmp.Packing, cmp.Fewest, opt.SeriesEvery)
		cmp.LP.LP.IntegralCost = cmp.IntegralCost
		ctls = slices.Insert(ctls, 1, Controller(NewSeedRule(policy, catalog)))
	}
	for _, ctl := range ctls {
		run, err := Simulate(tr, catalog, policy, ctl, opt)
		if err != nil {
			return Comparison{}, err
		}
		cmp.Runs = append(cmp.Runs, run)
	}
	scored := cmp.Runs
	if bounds {
		scored = cmp.allRuns()
	}
	for _, r := range scored {
		cmp.Scores = append(cmp.Scores, cmp.scoreOf(r))
	}
	return cmp, nil
}

// bestIntegral sums, minute by minute, the cheapest of the integral
// packings the offline yardsticks found.
func bestIntegral(lp, packing, fewest Run, every time.Duration) float64 {
	total := 0.0
	for k, s := range lp.Series {
		best := math.Inf(1)
		for _, r := range []Run{lp, packing, fewest} {
			if k < len(r.Series) {
				h := r.Series[k].HourlyCost
				if r.Policy == lp.Policy {
					h = s.IntegralCost
				}
				if h > 0 || s.HourlyCost == 0 {
					best = min(best, h)
				}
			}
		}
		if math.IsInf(best, 1) {
			best = 0
		}
		total += best * min(every, lp.Span-s.At).Hours()
	}
	return total
}

// run is the run of the named policy ("" when absent).
func (c Comparison) run(policy string) Run {
	for _, r := range c.Runs {
		if r.Policy == policy {
			return r
		}
	}
	return Run{}
}

func ratio(a, b float64) float64 {
	if b > 0 {
		return a / b
	}
	return 0
}

func (c Comparison) scoreOf(r Run) Score {
	s := Score{Policy: r.Policy, NodeHours: r.NodeHours, Cost: r.Cost, ScaleOps: r.ScaleUps + r.ScaleDowns,
		BusyRemovals: r.BusyRemovals, Evictions: r.Evictions, Stranded: r.Stranded, Replacements: r.Replacements,
		StillPending: r.StillPending, Unfit: r.Unfit, Interruptions: r.Interruptions, Disrupted: r.Disrupted}
	s.LPCostRatio = ratio(r.Cost, c.LP.Cost)
	s.NodeHoursRatio, s.CostRatio = ratio(r.NodeHours, c.Bound.NodeHours), ratio(r.Cost, c.Bound.Cost)
	if c.Packing.NodeHours > 0 && c.Packing.Cost > 0 {
		s.PackingNodeHoursRatio, s.PackingCostRatio = r.NodeHours/c.Packing.NodeHours, r.Cost/c.Packing.Cost
	}
	s.KarpenterCostRatio = ratio(r.Cost, c.run(KarpenterLike).Cost)
	s.CACostRatio = ratio(r.Cost, c.run(ClusterAutoscalerLike).Cost)
	threshold := c.Policy.PendingThreshold.D()
	waits := slices.Clone(r.Waits)
	slices.Sort(waits)
	beyond := make([]time.Duration, len(waits))
	for i, w := range waits {
		beyond[i] = max(0, w-threshold)
		s.PodMinutesPending += w.Minutes()
	}
	s.WaitP50, s.WaitP90, s.WaitP99 = quantile(waits, 0.50), quantile(waits, 0.90), quantile(waits, 0.99)
	s.BeyondP50, s.BeyondP99 = quantile(beyond, 0.50), quantile(beyond, 0.99)
	if len(waits) > 0 {
		s.MaxPending, s.BeyondMax = waits[len(waits)-1], beyond[len(beyond)-1]
	}
	return s
}

// quantile is the nearest-rank quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// PendingLimit is the target's bound on any schedulable pod's wait:
// threshold + provisioning delay + one sample interval.
func (c Comparison) PendingLimit() time.Duration {
	return c.Policy.PendingThreshold.D() + c.Options.ProvisioningDelay + c.Policy.SampleInterval.D()
}

// WriteTable writes the scores as a Markdown table.
func (c Comparison) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Trace **%s** (%d pods, fingerprint `%s`): %s\n\n", c.Trace, c.Pods, c.Fingerprint, c.Source)
	b.WriteString("| policy | node-hours | cost $ | × LP bound | × fractional bound (cost / node-h) | × karpenter-like | × cluster-autoscaler-like | wait p50 / p99 / max | p99 beyond threshold | pod-min pending | scale ops | busy removals | evictions (stranded) | replacements | pending at end |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scores {
		fmt.Fprintf(&b, "| %s | %.1f | %.2f | %.3f | %.2f / %.2f | %.2f | %.2f | %s / %s / %s | %s | %.0f | %d | %d | %d (%d) | %d | %d |\n",
			s.Policy, s.NodeHours, s.Cost, s.LPCostRatio, s.CostRatio, s.NodeHoursRatio, s.KarpenterCostRatio, s.CACostRatio,
			short(s.WaitP50), short(s.WaitP99), short(s.MaxPending), short(s.BeyondP99),
			s.PodMinutesPending, s.ScaleOps, s.BusyRemovals, s.Evictions, s.Stranded, s.Replacements, s.StillPending)
	}
	if len(c.Scores) > 0 && c.Scores[0].Unfit > 0 {
		fmt.Fprintf(&b, "\n%d pods fit no allowed size and are left out of every row.\n", c.Scores[0].Unfit)
	}
	if st := c.LP.LP; st != nil {
		fmt.Fprintf(&b, "\nLP bound: %d minutes, %d distinct slices solved, %d converged (the rest report the Farley bound of their last duals), %d master iterations, %d columns; the best integral packing found each minute costs $%.2f, %.3f× the LP bound.\n",
			st.Slices, st.Solved, st.Converged, st.Iterations, st.Columns, c.IntegralCost, ratio(c.IntegralCost, c.LP.Cost))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func short(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%.1fm", d.Minutes())
	}
	return fmt.Sprintf("%.1fh", d.Hours())
}

// Law returns the score of the pool's own law (the first policy run).
func (c Comparison) Law() Score { return c.Named("visor law") }

// ScoreLaw runs only the pool's law with policy, scored against the bounds
// and peers of a comparison on the same trace: for sweeping policy variants.
func ScoreLaw(tr Trace, catalog []types.InstanceType, policy types.Policy, against Comparison, opt Options) (Score, error) {
	return ScoreLawWith(tr, catalog, policy, AllRules(), against, opt)
}

// ScoreLawWith is ScoreLaw with only the given version rules.
func ScoreLawWith(tr Trace, catalog []types.InstanceType, policy types.Policy, rules Rules, against Comparison, opt Options) (Score, error) {
	if err := policy.Validate(); err != nil {
		return Score{}, err
	}
	// The bounds stay the whole catalog's: a variant that allows fewer
	// sizes is measured against what every size allows.
	catalog, err := sizing.Restrict(catalog, policy.AllowedSizes)
	if err != nil {
		return Score{}, fmt.Errorf("policy.allowedSizes: %w", err)
	}
	run, err := Simulate(tr, catalog, policy, NewLawWith("visor law", policy, catalog, rules), opt.withDefaults())
	if err != nil {
		return Score{}, err
	}
	against.Policy = policy
	return against.scoreOf(run), nil
}

// ScoreRule scores another controller against a comparison on the same
// trace: the peer rules' rows of the variant sweep.
func ScoreRule(tr Trace, catalog []types.InstanceType, policy types.Policy, ctl Controller, against Comparison, opt Options) (Score, error) {
	run, err := Simulate(tr, catalog, policy, ctl, opt.withDefaults())
	if err != nil {
		return Score{}, err
	}
	against.Policy = policy
	return against.scoreOf(run), nil
}
