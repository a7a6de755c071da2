package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// poolCmd builds the pool subcommands.
type poolCmd struct{ contractCmd }

func newPoolCommand(g *globalFlags) *cobra.Command {
	p := &poolCmd{contractCmd{g: g}}
	cmd := &cobra.Command{
		Use:   "pool",
		Short: "Register, list, inspect and operate node pools",
		Long: `A pool is one long-lived workflow with ID pool/<org>/<project>/<service>/<provider>/<cluster>.
These commands use its contract: the set-policy, scale, pause, resume and deregister
updates and the status query, and list pools through the Visor* search attributes.`,
	}
	addOutputFlag(cmd, &p.output)
	cmd.AddCommand(p.applyCommand(), p.listCommand(), p.describeCommand(),
		p.scaleCommand(), p.pauseCommand(), p.resumeCommand(), p.deleteCommand())
	return cmd
}

func (p *poolCmd) listCommand() *cobra.Command {
	var f starter.PoolFilter
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pools through the search attributes (no workflow is queried)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := f.Query(); err != nil {
				return err
			}
			c, err := p.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			pools, err := starter.ListPools(cmd.Context(), c, p.g.connectOptions().Namespace, f)
			if err != nil {
				return err
			}
			if pools == nil {
				pools = []starter.PoolSummary{}
			}
			now := time.Now()
			return writeOutput(cmd.OutOrStdout(), p.output, pools, func(tw *tabwriter.Writer) {
				status := ""
				if f.IncludeClosed {
					status = "\tSTATUS"
				}
				fmt.Fprintf(tw, "POOL\tSTATE\tNODES\tTARGET\tPENDING\tLAST SCALE%s\n", status)
				for _, s := range pools {
					if f.IncludeClosed {
						status = "\t" + s.Status
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s%s\n", s.ID, orDash(s.State), s.Nodes, s.TargetNodes, s.PendingPods, ago(s.LastScale, now), status)
				}
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Org, "org", "", "only pools of this org (VisorOrg)")
	fl.StringVar(&f.Project, "project", "", "only pools of this project (VisorProject)")
	fl.StringVar(&f.Service, "service", "", "only pools of this service (VisorService)")
	fl.StringVar(&f.Provider, "provider", "", "only pools on this provider (VisorProvider)")
	fl.StringVar(&f.Cluster, "cluster", "", "only pools on this cluster (VisorCluster)")
	fl.StringVar(&f.State, "state", "", "only pools in this state: "+strings.Join(starter.PoolStates, ", "))
	fl.BoolVar(&f.IncludeClosed, "all", false, "include deregistered and failed pools")
	_ = cmd.RegisterFlagCompletionFunc("state", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return starter.PoolStates, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func (p *poolCmd) describeCommand() *cobra.Command {
	return p.poolOp("describe POOL-ID", "Show a pool's full state (the status query)",
		func(ctx context.Context, cmd *cobra.Command, c client.Client, key types.PoolKey) error {
			st, err := starter.PoolStatus(ctx, c, key)
			if err != nil {
				return explain(key, "status", err)
			}
			return writeOutput(cmd.OutOrStdout(), p.output, st, func(tw *tabwriter.Writer) {
				describePool(tw, st, time.Now())
			})
		})
}

// describePool is the human summary: what an operator asks first.
func describePool(tw *tabwriter.Writer, st contract.PoolStatus, now time.Time) {
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, a...)) }
	pol := st.Policy
	row("Pool", "%s", st.Key.WorkflowID())
	row("State", "%s", st.State)
	row("Nodes", "%d observed, target %d (floor %d, ceiling %d)", st.Nodes, st.TargetNodes, pol.MinNodes, pol.MaxNodes)
	row("Pending pods", "%d", st.PendingPods)
	if st.Paused {
		row("Paused", "yes: %s", orDash(st.PausedReason))
	}
	if st.Deregistering {
		row("Deregistering", "yes: draining every node, then completing")
	}
	reach := "reachable"
	if !st.Cluster.Reachable {
		reach = "unreachable"
	}
	row("Cluster", "%s (%s, %s)", st.Key.Cluster, orDash(string(st.Cluster.Phase)), reach)
	if st.Frozen != "" {
		row("Frozen", "%s", st.Frozen)
	}
	for _, b := range st.Blocked {
		row("Blocked", "%s", b)
	}
	row("Policy", "pending %s, idle %s below %.0f%% CPU / %.0f%% memory, cooldown up %s / down %s",
		pol.PendingThreshold, pol.IdleWindow, pol.IdleCPUThreshold*100, pol.IdleMemoryThreshold*100, pol.ScaleUpCooldown, pol.ScaleDownCooldown)
	row("Last scale-up", "%s", ago(st.LastScaleUp, now))
	row("Last scale-down", "%s", ago(st.LastScaleDown, now))
	row("Last observation", "%s", ago(st.LastObservationAt, now))
	if !st.NextWake.IsZero() {
		row("Next wake", "%s (%s)", st.NextWake.UTC().Format(time.RFC3339), orDash(st.NextWakeReason))
	}
	if len(st.Unplaceable) > 0 {
		pods := make([]string, 0, len(st.Unplaceable))
		for pod, why := range st.Unplaceable {
			pods = append(pods, pod+": "+why)
		}
		sort.Strings(pods)
		row("Unplaceable", "%s", strings.Join(pods, "; "))
	}
	if st.LastRejected != "" {
		row("Last rejected", "%s", st.LastRejected)
	}
	row("Runs", "%d continued-as-new", st.ContinuedAsNew)
	if n := len(st.Decisions); n > 0 {
		fmt.Fprintln(tw, "Decisions (newest last):")
		for _, d := range st.Decisions[max(0, n-5):] {
			by := ""
			if d.RequestedBy != "" {
				by = " by " + d.RequestedBy
			}
			fmt.Fprintf(tw, "  #%d\t%s\t%s%s\t%s → %s\n", d.Seq, d.At.UTC().Format(time.RFC3339), d.Action, by, d.Reason, d.Outcome)
		}
	}
}

// completePoolIDs offers running pools' IDs to shell completion.
func (p *poolCmd) completePoolIDs(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
	defer cancel()
	c, err := p.g.dial(ctx, nil)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer c.Close()
	pools, err := starter.ListPools(ctx, c, p.g.connectOptions().Namespace, starter.PoolFilter{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var ids []string
	for _, s := range pools {
		if strings.HasPrefix(s.ID, prefix) {
			ids = append(ids, s.ID)
		}
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

// explain turns an update's or query's failure into what the user needs:
// the validator's own reason when the pool refused, or a plain "no such
// pool" instead of a gRPC status.
func explain(key types.PoolKey, what string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return fmt.Errorf("%s refused %s: %s", key.WorkflowID(), what, appErr.Message())
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return fmt.Errorf("%s: %s (is the ID right, and the namespace?)", key.WorkflowID(), notFound.Message)
	}
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
