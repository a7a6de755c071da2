package score

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Score is one row of the table: a run measured against the lower bound.
type Score struct {
	Policy    string
	NodeHours float64
	Cost      float64
	// Ratios to the lower bound's node-hours and cost.
	NodeHoursRatio, CostRatio float64
	// Ratios to the offline packing's node-hours and cost.
	PackingNodeHoursRatio, PackingCostRatio float64
	// Pending time beyond the pending threshold over schedulable pods.
	BeyondP50, BeyondP99, BeyondMax time.Duration
	// MaxPending is the longest total wait of any schedulable pod.
	MaxPending        time.Duration
	PodMinutesPending float64
	ScaleOps          int
	BusyRemovals      int
	Evictions         int
	Stranded          int
	StillPending      int
	Unfit             int
}

// Comparison is every policy run on one trace, with the bound.
type Comparison struct {
	Trace       string
	Source      string
	Pods        int
	Fingerprint string
	Policy      types.Policy
	Options     Options
	// Bound is the fractional lower bound; Packing the planner's offline packing.
	Bound   Run
	Packing Run
	// Fewest is the nodes-first offline packing (NodesFirstPacking).
	Fewest Run
	Runs   []Run
	Scores []Score
}

// Compare runs the pool's law, the seed rule, the cluster-autoscaler-like
// rule and the lower bound on the same trace and catalog.
func Compare(tr Trace, catalog []types.InstanceType, policy types.Policy, opt Options) (Comparison, error) {
	if err := policy.Validate(); err != nil {
		return Comparison{}, err
	}
	opt = opt.withDefaults()
	cmp := Comparison{Trace: tr.Name, Source: tr.Source, Pods: len(tr.Pods), Fingerprint: tr.Fingerprint(), Policy: policy, Options: opt}
	cmp.Bound = LowerBound(tr, catalog, policy, opt.SeriesEvery)
	cmp.Packing = OfflinePacking(tr, catalog, policy, opt.SeriesEvery)
	cmp.Fewest = NodesFirstPacking(tr, catalog, policy, opt.SeriesEvery)
	for _, ctl := range []Controller{
		NewLaw("visor law", policy, catalog),
		NewSeedRule(policy, catalog),
		NewClusterAutoscaler(policy, catalog),
	} {
		run, err := Simulate(tr, catalog, policy, ctl, opt)
		if err != nil {
			return Comparison{}, err
		}
		cmp.Runs = append(cmp.Runs, run)
	}
	for _, r := range append([]Run{cmp.Bound, cmp.Packing, cmp.Fewest}, cmp.Runs...) {
		cmp.Scores = append(cmp.Scores, scoreOf(r, cmp.Bound, cmp.Packing, policy.PendingThreshold.D()))
	}
	return cmp, nil
}

func scoreOf(r, bound, packing Run, threshold time.Duration) Score {
	s := Score{Policy: r.Policy, NodeHours: r.NodeHours, Cost: r.Cost, ScaleOps: r.ScaleUps + r.ScaleDowns,
		BusyRemovals: r.BusyRemovals, Evictions: r.Evictions, Stranded: r.Stranded, StillPending: r.StillPending, Unfit: r.Unfit}
	if bound.NodeHours > 0 {
		s.NodeHoursRatio = r.NodeHours / bound.NodeHours
	}
	if bound.Cost > 0 {
		s.CostRatio = r.Cost / bound.Cost
	}
	if packing.NodeHours > 0 && packing.Cost > 0 {
		s.PackingNodeHoursRatio, s.PackingCostRatio = r.NodeHours/packing.NodeHours, r.Cost/packing.Cost
	}
	beyond := make([]time.Duration, len(r.Waits))
	for i, w := range r.Waits {
		beyond[i] = max(0, w-threshold)
		s.MaxPending = max(s.MaxPending, w)
		s.PodMinutesPending += w.Minutes()
	}
	slices.Sort(beyond)
	s.BeyondP50, s.BeyondP99 = quantile(beyond, 0.50), quantile(beyond, 0.99)
	if len(beyond) > 0 {
		s.BeyondMax = beyond[len(beyond)-1]
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
	b.WriteString("| policy | node-hours | cost $ | × bound (node-h / cost) | × packing (node-h / cost) | beyond threshold p50 / p99 / max | max pending | pod-min pending | scale ops | busy removals | evictions (stranded) | pending at end |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scores {
		fmt.Fprintf(&b, "| %s | %.1f | %.2f | %.2f / %.2f | %.2f / %.2f | %s / %s / %s | %s | %.0f | %d | %d | %d (%d) | %d |\n",
			s.Policy, s.NodeHours, s.Cost, s.NodeHoursRatio, s.CostRatio, s.PackingNodeHoursRatio, s.PackingCostRatio,
			short(s.BeyondP50), short(s.BeyondP99), short(s.BeyondMax), short(s.MaxPending),
			s.PodMinutesPending, s.ScaleOps, s.BusyRemovals, s.Evictions, s.Stranded, s.StillPending)
	}
	if len(c.Scores) > 0 && c.Scores[0].Unfit > 0 {
		fmt.Fprintf(&b, "\n%d pods fit no allowed size and are left out of every row.\n", c.Scores[0].Unfit)
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
func (c Comparison) Law() Score {
	for _, s := range c.Scores {
		if s.Policy == "visor law" {
			return s
		}
	}
	return Score{}
}

// ScoreLaw runs only the pool's law with policy, scored against bounds
// already computed for the same trace: for sweeping policy variants.
func ScoreLaw(tr Trace, catalog []types.InstanceType, policy types.Policy, bound, packing Run, opt Options) (Score, error) {
	return ScoreLawWith(tr, catalog, policy, law.AllRules(), bound, packing, opt)
}

// ScoreLawWith is ScoreLaw with only the given version rules.
func ScoreLawWith(tr Trace, catalog []types.InstanceType, policy types.Policy, rules law.Rules, bound, packing Run, opt Options) (Score, error) {
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
	return scoreOf(run, bound, packing, policy.PendingThreshold.D()), nil
}
