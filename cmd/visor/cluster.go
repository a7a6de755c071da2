package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// clusterCmd builds the cluster subcommands.
type clusterCmd struct{ contractCmd }

func newClusterCommand(g *globalFlags) *cobra.Command {
	cl := &clusterCmd{contractCmd{g: g}}
	return cl.group(&cobra.Command{
		Use:   "cluster",
		Short: "Enroll, list, inspect and operate clusters",
		Long: `A cluster is one long-lived workflow with ID cluster/<id>. Its declared half (phase, region,
zone, residency, metrics label, provider, owner) is what you set; its observed half
(reachability, sync, lag, capabilities) is what its watcher and agent report. The phase gates
every pool on the cluster: active scales both ways, draining never adds capacity, pending and
disabled do nothing.`,
	}, cl.enrollCommand(), cl.listCommand(), cl.describeCommand(), cl.setPhaseCommand(),
		cl.setTierCommand(), cl.rotateTokenCommand(), cl.reportCommand())
}

// clusterOp runs one operation on the cluster named by the first argument.
func (cl *clusterCmd) clusterOp(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := types.ValidateDNSLabel("cluster id", args[0]); err != nil {
				return err
			}
			c, err := cl.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return run(cmd.Context(), cmd, c, args)
		},
	}
}

// enrolled is what `enroll` and `rotate-token` print. Token is set only
// when a new one was minted and is not written to a file.
type enrolled struct {
	Cluster     string `json:"cluster"`
	Created     bool   `json:"created"`
	Token       string `json:"token,omitempty"`
	TokenFile   string `json:"tokenFile,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// PriorityRaised says an already-enrolled cluster was given the task
	// priority enrollments now start with.
	PriorityRaised bool `json:"priorityRaised,omitempty"`
}

func (cl *clusterCmd) enrollCommand() *cobra.Command {
	var d contract.ClusterDeclared
	var phase, taskQueue, tokenFile string
	var sample, stale time.Duration
	cmd := cl.clusterOp("enroll CLUSTER-ID --provider P", "Enroll a cluster and mint its enrollment token (printed once; only its hash is stored)",
		cobra.ExactArgs(1), func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error {
			d.ID, d.Phase = args[0], contract.ClusterPhase(phase)
			d.SampleInterval, d.StaleAfter = types.Duration(sample), types.Duration(stale)
			token, created, err := starter.EnrollCluster(ctx, c, d, taskQueue)
			if err != nil {
				return err
			}
			out := enrolled{Cluster: d.ID, Created: created}
			if created {
				if out, err = handOverToken(out, token, tokenFile); err != nil {
					return err
				}
			} else if out.PriorityRaised, err = starter.RaiseClusterPriority(ctx, c, cl.g.connectOptions().Namespace, d.ID, "visor cluster enroll"); err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), cl.output, out, func(tw *tabwriter.Writer) {
				if !created {
					fmt.Fprintf(tw, "cluster %s is already enrolled; its token is unchanged (visor cluster rotate-token %s mints a new one)\n", d.ID, d.ID)
					if out.PriorityRaised {
						fmt.Fprintf(tw, "cluster %s enrolled before cluster workflows ran ahead of their pools: its task priority is now %d\n", d.ID, contract.ClusterPriorityKey)
					}
					return
				}
				fmt.Fprintf(tw, "cluster %s enrolled (phase %s)\n", d.ID, orDefaultPhase(d.Phase))
				printToken(tw, out)
			})
		})
	fl := cmd.Flags()
	fl.StringVar(&d.Provider, "provider", "", "provider the cluster's nodes come from (sim, aws, digitalocean, hetzner, vsphere)")
	fl.StringVar(&phase, "phase", string(contract.PhasePending), "initial phase: pending, active, draining, disabled")
	fl.StringVar(&d.Region, "region", "", "region label for placement, e.g. us-east")
	fl.StringVar(&d.Zone, "zone", "", "zone within the region")
	fl.StringVar(&d.Residency, "residency", "", "data residency label for placement, e.g. gdpr")
	fl.StringVar(&d.MetricsLabel, "metrics-label", "", "cluster label its metrics carry; unique across clusters (default: the cluster ID)")
	fl.StringVar(&d.Owner, "owner", "", "owning team")
	fl.DurationVar(&sample, "sample-interval", 30*time.Second, "how often the watcher samples the cluster")
	fl.DurationVar(&stale, "stale-after", 0, "with no sample for this long, pools freeze scale-down (default 4×sample + 1m)")
	fl.StringVar(&taskQueue, "task-queue", contract.DefaultTaskQueue, "task queue of the cluster workflow")
	fl.StringVar(&tokenFile, "token-file", "", "write the token to this new file (mode 0600) instead of printing it")
	_ = cmd.MarkFlagRequired("provider")
	return cmd
}

func orDefaultPhase(p contract.ClusterPhase) contract.ClusterPhase {
	if p == "" {
		return contract.PhasePending
	}
	return p
}

// handOverToken writes the token to a new file, or puts it in the output.
func handOverToken(out enrolled, token, file string) (enrolled, error) {
	hash, _, err := contract.TokenCredentials(token)
	if err != nil {
		return out, err
	}
	out.Fingerprint = contract.TokenFingerprint(hash)
	if file == "" {
		out.Token = token
		return out, nil
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return out, fmt.Errorf("token file: %w (the token was minted; rotate it to get another)", err)
	}
	_, werr := fmt.Fprintln(f, token)
	if err := errors.Join(werr, f.Close()); err != nil {
		return out, fmt.Errorf("token file %s: %w (the token was minted; rotate it to get another)", file, err)
	}
	out.TokenFile = file
	return out, nil
}

func printToken(tw *tabwriter.Writer, out enrolled) {
	if out.TokenFile != "" {
		fmt.Fprintf(tw, "enrollment token %s written to %s\n", out.Fingerprint, out.TokenFile)
		return
	}
	fmt.Fprintf(tw, "enrollment token %s (shown once; only its hash is stored):\n%s\n", out.Fingerprint, out.Token)
}

func (cl *clusterCmd) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List enrolled clusters with their phase and what is observed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cl.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			clusters, err := starter.ListClusters(cmd.Context(), c, true)
			if err != nil {
				return err
			}
			if clusters == nil {
				clusters = []starter.ClusterEntry{}
			}
			now := time.Now()
			return writeOutput(cmd.OutOrStdout(), cl.output, clusters, func(tw *tabwriter.Writer) {
				fmt.Fprintln(tw, "CLUSTER\tPHASE\tREGION\tPROVIDER\tREACHABLE\tSYNC\tPOOLS\tLAST SAMPLE\tFROZEN")
				for _, e := range clusters {
					d := e.Declared
					reach, sync, pools, last, frozen := "?", "?", "?", "?", "status: "+e.StatusError
					if st := e.Status; st != nil {
						reach, sync, pools = fmt.Sprint(st.Observed.Reachable), string(st.Observed.SyncState), fmt.Sprint(len(st.Pools))
						last, frozen = ago(st.Observed.LastSyncAt, now), orDash(safe(st.Frozen))
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, d.Phase, orDash(d.Region), d.Provider, reach, sync, pools, last, frozen)
				}
			})
		},
	}
}

func (cl *clusterCmd) describeCommand() *cobra.Command {
	return cl.clusterOp("describe CLUSTER-ID", "Show a cluster's declared and observed halves and its pools",
		cobra.ExactArgs(1), func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error {
			st, err := starter.ClusterStatus(ctx, c, args[0])
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), cl.output, st, func(tw *tabwriter.Writer) {
				describeCluster(tw, st, time.Now())
			})
		})
}

// describeCluster keeps the two halves apart, as the workflow does.
func describeCluster(tw *tabwriter.Writer, st contract.ClusterStatus, now time.Time) {
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, a...)) }
	d, o := st.Declared, st.Observed
	row("Cluster", "%s", d.ID)
	fmt.Fprintln(tw, "Declared")
	row("  Phase", "%s", d.Phase)
	if pc := st.LastPhaseChange; pc != nil {
		row("  Last phase change", "%s → %s %s by %s: %s", pc.From, pc.To, ago(pc.At, now), orDash(safe(pc.RequestedBy)), safe(pc.Reason))
	}
	row("  Billing tier", "%s", d.Tier.OrManaged())
	if tc := st.LastTierChange; tc != nil {
		row("  Last tier change", "%s → %s %s by %s: %s", tc.From.OrManaged(), tc.To, ago(tc.At, now), orDash(safe(tc.RequestedBy)), safe(tc.Reason))
	}
	row("  Provider", "%s", d.Provider)
	row("  Region / zone", "%s / %s", orDash(d.Region), orDash(d.Zone))
	row("  Residency", "%s", orDash(d.Residency))
	row("  Metrics label", "%s", orDash(d.MetricsLabel))
	row("  Owner", "%s", orDash(safe(d.Owner)))
	row("  Token", "%s, issued %s", orDash(st.TokenFingerprint), ago(st.TokenIssuedAt, now))
	fmt.Fprintln(tw, "Observed")
	row("  Reachable", "%t", o.Reachable)
	row("  Sync", "%s, last sample %s", o.SyncState, ago(o.LastSyncAt, now))
	if o.LastError != "" {
		row("  Last error", "%s", safe(o.LastError))
	}
	if o.LastReportAt.IsZero() {
		row("  Agent", "has not reported")
	} else {
		row("  Agent", "%s, reported %s, lag %dms", orDash(safe(o.AgentVersion)), ago(o.LastReportAt, now), o.LagMillis)
		row("  Capabilities", "MIG %t, NVLink %t, RDMA %t", o.Capabilities.MIG, o.Capabilities.NVLink, o.Capabilities.RDMA)
		row("  Nodes / node pools", "%d / %d", o.Nodes, o.Pools)
	}
	if st.Frozen != "" {
		row("Pools frozen", "%s", safe(st.Frozen))
	}
	if st.LastRejected != "" {
		row("Last rejected", "%s", safe(st.LastRejected))
	}
	row("Pools", "%d registered", len(st.Pools))
	for _, id := range slices.Sorted(maps.Keys(st.Pools)) {
		fmt.Fprintf(tw, "  %s\n", id)
	}
}

func (cl *clusterCmd) setPhaseCommand() *cobra.Command {
	var req contract.SetPhaseRequest
	cmd := cl.clusterOp("set-phase CLUSTER-ID PHASE --reason TEXT", "Move a cluster to pending, active, draining or disabled; every pool on it hears it at once",
		cobra.ExactArgs(2), func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error {
			req.Phase = contract.ClusterPhase(args[1])
			st, err := starter.SetClusterPhase(ctx, c, args[0], req)
			if err != nil {
				return explainCluster(args[0], contract.UpdateSetPhase, err)
			}
			return writeOutput(cmd.OutOrStdout(), cl.output, st, func(tw *tabwriter.Writer) {
				fmt.Fprintf(tw, "cluster %s is %s; %s told\n", st.Declared.ID, st.Declared.Phase, plural(len(st.Pools), "pool", "pools"))
			})
		})
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 1 {
			return []string{"pending", "active", "draining", "disabled"}, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why (required by the cluster)")
	cmd.Flags().StringVar(&req.RequestedBy, "requested-by", whoAmI(), "who asks")
	return cmd
}

func (cl *clusterCmd) setTierCommand() *cobra.Command {
	var req contract.SetTierRequest
	cmd := cl.clusterOp("set-tier CLUSTER-ID TIER --reason TEXT", "Bill a cluster's pools as managed (node-hours) or byo (management-plane pool-hours, the tenant's own account pays for nodes); platform administrators only",
		cobra.ExactArgs(2), func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error {
			req.Tier = contract.BillingTier(args[1])
			if err := contract.ValidateTier("tier", req.Tier); err != nil {
				return err
			}
			st, err := starter.SetClusterTier(ctx, c, args[0], req)
			if err != nil {
				return explainCluster(args[0], contract.UpdateSetTier, err)
			}
			return writeOutput(cmd.OutOrStdout(), cl.output, st, func(tw *tabwriter.Writer) {
				fmt.Fprintf(tw, "cluster %s is billed %s from the next hour; %s told\n", st.Declared.ID, st.Declared.Tier.OrManaged(), plural(len(st.Pools), "pool", "pools"))
			})
		})
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 1 {
			return []string{string(contract.TierManaged), string(contract.TierBYO)}, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why (required by the cluster)")
	cmd.Flags().StringVar(&req.RequestedBy, "requested-by", whoAmI(), "who asks")
	return cmd
}

func (cl *clusterCmd) rotateTokenCommand() *cobra.Command {
	var reason, requestedBy, tokenFile string
	cmd := cl.clusterOp("rotate-token CLUSTER-ID --reason TEXT", "Mint a new enrollment token; the old one is refused from then on",
		cobra.ExactArgs(1), func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error {
			token, _, err := starter.RotateClusterToken(ctx, c, args[0], reason, requestedBy)
			if err != nil {
				return explainCluster(args[0], contract.UpdateRotateToken, err)
			}
			out, err := handOverToken(enrolled{Cluster: args[0]}, token, tokenFile)
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), cl.output, out, func(tw *tabwriter.Writer) {
				fmt.Fprintf(tw, "cluster %s: token rotated; the old one is refused from now on\n", args[0])
				printToken(tw, out)
			})
		})
	cmd.Flags().StringVar(&reason, "reason", "", "why (required by the cluster)")
	cmd.Flags().StringVar(&requestedBy, "requested-by", whoAmI(), "who asks")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "write the token to this new file (mode 0600) instead of printing it")
	return cmd
}

func (cl *clusterCmd) reportCommand() *cobra.Command {
	var r contract.ObservedReport
	var tokenEnv, sync string
	cmd := cl.clusterOp("report CLUSTER-ID --token-env VAR", "Report the cluster's observed state as its agent, signed with its enrollment token",
		cobra.ExactArgs(1), func(ctx context.Context, cmd *cobra.Command, c client.Client, args []string) error {
			token := os.Getenv(tokenEnv)
			if token == "" {
				return fmt.Errorf("environment variable %s is empty: it must hold the cluster's enrollment token", tokenEnv)
			}
			r.SyncState = contract.SyncState(sync)
			st, err := starter.ReportObserved(ctx, c, args[0], token, r)
			if err != nil {
				return explainCluster(args[0], contract.UpdateReportObserved, err)
			}
			return writeOutput(cmd.OutOrStdout(), cl.output, st, func(tw *tabwriter.Writer) {
				fmt.Fprintf(tw, "cluster %s: report accepted (sync %s, reachable %t)\n", args[0], st.Observed.SyncState, st.Observed.Reachable)
			})
		})
	fl := cmd.Flags()
	// The token comes from the environment, never a flag: flags show in
	// process listings and shell history.
	fl.StringVar(&tokenEnv, "token-env", "VISOR_CLUSTER_TOKEN", "environment variable holding the enrollment token")
	fl.StringVar(&sync, "sync", string(contract.SyncConnected), "sync state: connected, disconnected, syncing")
	fl.BoolVar(&r.Capabilities.MIG, "mig", false, "the cluster supports NVIDIA MIG")
	fl.BoolVar(&r.Capabilities.NVLink, "nvlink", false, "devices are connected by NVLink/NVSwitch")
	fl.BoolVar(&r.Capabilities.RDMA, "rdma", false, "RDMA networking is available")
	fl.StringVar(&r.AgentVersion, "agent-version", "", "the reporting agent's version")
	fl.IntVar(&r.Nodes, "nodes", 0, "nodes in the cluster")
	fl.IntVar(&r.Pools, "pools", 0, "node pools in the cluster")
	return cmd
}

// explainCluster gives the cluster's own reason when it refused.
func explainCluster(cluster, what string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return fmt.Errorf("cluster %s refused %s: %s", cluster, what, strings.TrimSpace(appErr.Message()))
	}
	return err
}
