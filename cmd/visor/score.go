package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/score"
)

// newScoreCommand replays a demand trace against the pool's control law and
// the baselines, offline: no Temporal server is needed.
func newScoreCommand() *cobra.Command {
	var tracePath, specPath, pool, plots string
	var topt score.TraceOptions
	var opt score.Options
	var spot score.Spot
	var withSpot bool
	cmd := &cobra.Command{
		Use:   "score --trace <file> --policy <pools.yaml>",
		Short: "Score the control law against baselines on a demand trace (offline simulation)",
		Long: `Replays a pod trace (Alibaba openb pod-list CSV format) in simulated time against
the pool's own law (law.Decide with the real planner), the HIP seed rule,
cluster-autoscaler-like and karpenter-like rules, the configuration model's LP
cost bound and three more offline yardsticks, on the same trace and catalog;
prints the score table and the law's targets, and writes plots.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case tracePath == "":
				return errors.New("--trace is required")
			case specPath == "":
				return errors.New("--policy is required (a pools.yaml)")
			case opt.ProvisioningDelay < 0:
				return fmt.Errorf("--provisioning-delay must not be negative, got %s", opt.ProvisioningDelay)
			case opt.Tick < 0:
				return fmt.Errorf("--tick must not be negative, got %s", opt.Tick)
			case spot.PriceFactor <= 0 || spot.PriceFactor > 1:
				return fmt.Errorf("--spot-price-factor must be within (0, 1], got %g", spot.PriceFactor)
			case spot.InterruptionsPerNodeHour < 0:
				return fmt.Errorf("--spot-interruptions must not be negative, got %g", spot.InterruptionsPerNodeHour)
			}
			spec, catalog, err := score.PoolFromSpec(specPath, pool)
			if err != nil {
				return err
			}
			tr, err := score.LoadTrace(tracePath, topt)
			if err != nil {
				return err
			}
			cmp, err := score.Compare(tr, catalog, spec.Policy, opt)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if err := cmp.WriteTable(out); err != nil {
				return err
			}
			law := cmp.Law()
			fmt.Fprintf(out, "\nvisor law: %.3f× the LP bound's cost, %.2f× the karpenter-like rule's; %.2f× the lower bound's node-hours, %.2f× the offline packing's; longest wait %s (target %s); the nodes-first packing uses %.2f× the lower bound's\n",
				law.LPCostRatio, law.KarpenterCostRatio, law.NodeHoursRatio, law.PackingNodeHoursRatio, law.MaxPending.Round(time.Second), cmp.PendingLimit(), cmp.Fewest.NodeHours/max(cmp.Bound.NodeHours, 1e-9))
			if withSpot {
				s, err := score.ScoreLawWith(tr, catalog, spec.Policy, score.AllRules(), cmp, score.Options{Tick: opt.Tick, ProvisioningDelay: opt.ProvisioningDelay, Spot: &spot})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "[spot, on-demand]: cost $%.2f against $%.2f on demand (%.1f %% saved), %d interruptions disrupting %d pods, wait p99 %s (on demand %s), longest %s\n",
					s.Cost, law.Cost, 100*(1-s.Cost/max(law.Cost, 1e-9)), s.Interruptions, s.Disrupted, s.WaitP99.Round(time.Second), law.WaitP99.Round(time.Second), s.MaxPending.Round(time.Second))
			}
			for _, t := range cmp.Targets() {
				verdict := "met"
				if !t.Met {
					verdict = "NOT MET"
				}
				fmt.Fprintf(out, "  %s: %s (%s)\n", t.Name, verdict, t.Detail)
			}
			if plots == "" {
				return nil
			}
			files, err := cmp.WritePlots(plots)
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(out, "wrote", f)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tracePath, "trace", "", "pod trace: an openb pod-list CSV (traces/*.csv), or a synthetic one: synthetic:diurnal, synthetic:bursty or synthetic:step")
	f.StringVar(&specPath, "policy", "", "pools.yaml whose pool's policy and provider catalog to score")
	f.StringVar(&pool, "pool", "", "pool workflow ID when the file has several")
	f.BoolVar(&topt.CompressDay, "compress-day", false, "fold the openb trace's dense 34 days into one busy day")
	f.BoolVar(&topt.CPUOnly, "cpu-only", false, "keep only pods with num_gpu == 0")
	f.DurationVar(&opt.ProvisioningDelay, "provisioning-delay", 60*time.Second, "time from asking for a node to it being Ready")
	f.DurationVar(&opt.Tick, "tick", 10*time.Second, "simulation step")
	f.BoolVar(&withSpot, "spot", false, "also score the law buying spot ([spot, on-demand]) under the seeded interruption model")
	f.Float64Var(&spot.PriceFactor, "spot-price-factor", score.DefaultSpotPriceFactor, "spot price over on-demand, where the catalog has no spot offering")
	f.Float64Var(&spot.InterruptionsPerNodeHour, "spot-interruptions", score.DefaultSpotInterruptions, "spot interruptions per node-hour")
	f.Uint64Var(&spot.Seed, "spot-seed", 1, "seed of the interruption draws")
	f.StringVar(&plots, "plots", "score-plots", "directory for the SVG plots (empty: none)")
	return cmd
}
