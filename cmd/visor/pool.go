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
	return p.group(&cobra.Command{
		Use:   "pool",
		Short: "Register, list, inspect and operate node pools",
		Long: `A pool is one long-lived workflow with ID pool/<org>/<project>/<service>/<provider>/<cluster>.
These commands use its contract: the set-policy, scale, pause, resume and deregister
updates and the status query, and list pools through the Visor* search attributes.`,
	}, p.applyCommand(), p.listCommand(), p.describeCommand(),
		p.scaleCommand(), p.pauseCommand(), p.resumeCommand(), p.deleteCommand())
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
				fmt.Fprintf(tw, "POOL\tSTATE\tNODES\tTARGET\tPENDING\tLAST SCALE\tREASON%s\n", status)
				for _, s := range pools {
					if f.IncludeClosed {
						status = "\t" + s.Status
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s%s\n", s.ID, orDash(s.State), s.Nodes, s.TargetNodes, s.PendingPods, ago(s.LastScale, now), orDash(shorten(safe(s.Reason), reasonWidth)), status)
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

// describeDecisions is how many decisions describe shows unless told.
const describeDecisions = 5

func (p *poolCmd) describeCommand() *cobra.Command {
	var decisions int
	var uiURL string
	cmd := p.poolOp("describe POOL-ID", "Show a pool's full state (the status query), its run and its Web UI page",
		func(ctx context.Context, cmd *cobra.Command, c client.Client, key types.PoolKey) error {
			st, err := starter.PoolStatus(ctx, c, key)
			if err != nil {
				return explain(key, "status", err)
			}
			d := poolDescription{PoolStatus: st}
			if desc, err := c.DescribeWorkflowExecution(ctx, key.WorkflowID(), ""); err == nil {
				d.RunID = desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
			}
			d.WebUI = poolWebUIURL(p.webUIBase(uiURL), p.g.connectOptions().Namespace, key.WorkflowID(), d.RunID)
			return writeOutput(cmd.OutOrStdout(), p.output, d, func(tw *tabwriter.Writer) {
				describePool(tw, d, decisions, time.Now())
			})
		})
	cmd.Flags().IntVar(&decisions, "decisions", describeDecisions, "how many of the newest decisions to show (0 for all)")
	cmd.Flags().StringVar(&uiURL, "ui-url", "", "base URL of the Temporal Web UI (env "+uiURLEnv+"; default: visor dev's, for a local --address)")
	return cmd
}

// poolDescription is describe's answer: the status query and where to
// see the pool in the Web UI.
type poolDescription struct {
	contract.PoolStatus
	RunID string `json:"runID,omitempty"`
	WebUI string `json:"webUI,omitempty"`
}

// describePool is the human summary: what an operator asks first. Text
// that came from callers or the pool is passed through safe.
func describePool(tw *tabwriter.Writer, d poolDescription, decisions int, now time.Time) {
	st := d.PoolStatus
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, a...)) }
	pol := st.Policy
	row("Pool", "%s", st.Key.WorkflowID())
	if d.RunID != "" {
		row("Run", "%s", d.RunID)
	}
	if d.WebUI != "" {
		row("Web UI", "%s", d.WebUI)
	}
	row("State", "%s", st.State)
	row("Nodes", "%d observed, target %d (floor %d, ceiling %d)", st.Nodes, st.TargetNodes, pol.MinNodes, pol.MaxNodes)
	row("Pending pods", "%d", st.PendingPods)
	if st.Paused {
		row("Paused", "%s", pausedLine(st.PausedReason))
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
		row("Frozen", "%s", safe(st.Frozen))
	}
	for _, b := range st.Blocked {
		row("Blocked", "%s", safe(b))
	}
	if st.Drifted > 0 || st.Expired > 0 {
		row("Lifecycle", "%d drifted, %d expired (replaced within the disruption budget)", st.Drifted, st.Expired)
		for _, due := range st.Due {
			row("Due", "%s", safe(due))
		}
	}
	row("Policy", "pending %s, idle %s below %.0f%% CPU / %.0f%% memory, cooldown up %s / down %s",
		pol.PendingThreshold, pol.IdleWindow, pol.IdleCPUThreshold*100, pol.IdleMemoryThreshold*100, pol.ScaleUpCooldown, pol.ScaleDownCooldown)
	row("Last scale-up", "%s", ago(st.LastScaleUp, now))
	row("Last scale-down", "%s", ago(st.LastScaleDown, now))
	row("Last observation", "%s", ago(st.LastObservationAt, now))
	if !st.NextWake.IsZero() {
		row("Next wake", "%s (%s)", st.NextWake.UTC().Format(time.RFC3339), orDash(safe(st.NextWakeReason)))
	}
	if len(st.Unplaceable) > 0 {
		pods := make([]string, 0, len(st.Unplaceable))
		for pod, why := range st.Unplaceable {
			pods = append(pods, safe(pod)+": "+safe(why))
		}
		sort.Strings(pods)
		row("Unplaceable", "%s", strings.Join(pods, "; "))
	}
	if st.LastRejected != "" {
		row("Last rejected", "%s", safe(st.LastRejected))
	}
	row("Runs", "%d continued-as-new", st.ContinuedAsNew)
	n := len(st.Decisions)
	if n == 0 {
		return
	}
	shown := n
	if decisions > 0 && decisions < n {
		shown = decisions
	}
	if shown < n {
		fmt.Fprintf(tw, "Decisions (newest last; showing %d of %d, --decisions N for more):\n", shown, n)
	} else {
		fmt.Fprintf(tw, "Decisions (newest last; all %d):\n", n)
	}
	for _, dr := range st.Decisions[n-shown:] {
		by := ""
		if dr.RequestedBy != "" {
			by = " by " + safe(dr.RequestedBy)
		}
		fmt.Fprintf(tw, "  #%d\t%s\t%s%s\t%s → %s%s\n", dr.Seq, dr.At.UTC().Format(time.RFC3339), safe(dr.Action), by, safe(dr.Reason), safe(dr.Outcome), repeated(dr))
	}
}

// pausedLine turns the pool's "reason (by who)" into "yes (by who): reason".
func pausedLine(pausedReason string) string {
	reason, by := splitBy(strings.TrimSpace(pausedReason))
	line := "yes"
	if by != "" {
		line += " (by " + safe(by) + ")"
	}
	if reason != "" {
		line += ": " + safe(reason)
	}
	return line
}

// splitBy splits the pool's "reason (by who)" form; text without the
// suffix is all reason.
func splitBy(s string) (reason, by string) {
	if !strings.HasSuffix(s, ")") {
		return s, ""
	}
	i := strings.LastIndex(s, "(by ")
	if i < 0 {
		return s, ""
	}
	return strings.TrimSpace(s[:i]), s[i+len("(by ") : len(s)-1]
}

// reasonWidth keeps the list's REASON column to one readable line.
const reasonWidth = 60

func shorten(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
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

// repeated says how often a decision that changed nothing came again.
func repeated(dr contract.DecisionRecord) string {
	if dr.Repeats == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d more times, the last #%d at %s)", dr.Repeats, dr.LastSeq, dr.LastAt.UTC().Format(time.RFC3339))
}
