package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// poolOp runs one update on the pool named by the command's argument.
func (p *poolCmd) poolOp(use, short string, run func(ctx context.Context, cmd *cobra.Command, c client.Client, key types.PoolKey) error) *cobra.Command {
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.completePoolIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := types.ParsePoolID(args[0])
			if err != nil {
				return err
			}
			c, err := p.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return run(cmd.Context(), cmd, c, key)
		},
	}
}

// whoAmI is the default requestedBy: the pool's decision log says who.
func whoAmI() string {
	if u := os.Getenv("USER"); u != "" {
		return "visor-cli:" + u
	}
	return "visor-cli"
}

func (p *poolCmd) scaleCommand() *cobra.Command {
	var req contract.ScaleRequest
	cmd := p.poolOp("scale POOL-ID --to N --reason TEXT", "Ask the pool for an explicit node count (the validated scale update)",
		func(ctx context.Context, cmd *cobra.Command, c client.Client, key types.PoolKey) error {
			acc, err := starter.ScalePool(ctx, c, key, req)
			if err != nil {
				return explain(key, "scale", err)
			}
			return writeOutput(cmd.OutOrStdout(), p.output, acc, func(tw *tabwriter.Writer) {
				fmt.Fprintf(tw, "%s: scale accepted as decision #%d: %d → %s (%s)\n", key.WorkflowID(), acc.Seq, acc.From, plural(acc.Target, "node", "nodes"), safe(acc.Reason))
			})
		})
	cmd.Long = `scale asks the pool for an explicit node count through the validated scale update: a target
outside the pool's floor and ceiling, or an empty reason, is refused before it enters history.
The decision is recorded with its reason and who asked.

Without --hold a manual target does not hold: the control law takes over again at its next
decision. Nodes added beyond what pending pods need go idle and are removed once they have been
idle for the pool's idle window (after the scale-down cooldown); a pool scaled below its demand
scales up again once pods have been pending past the pending threshold.

With --hold DURATION (at most 168h) the target stands as the pool's floor for that long,
recorded in the decision: the law may still add nodes for pending pods, but removes none below
the target until the hold ends.`
	cmd.Flags().IntVar(&req.Target, "to", 0, "target node count, within the pool's floor and ceiling")
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why, for the pool's decision log (required by the pool)")
	cmd.Flags().StringVar(&req.RequestedBy, "requested-by", whoAmI(), "who asks")
	cmd.Flags().Var((*durationFlag)(&req.Hold), "hold", "keep the target as the floor for this long (e.g. 2h; at most 168h)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func (p *poolCmd) pauseCommand() *cobra.Command {
	cmd := p.pauseOp("pause", "Stop the pool acting; it keeps observing", "paused", "why, shown in status and the Web UI (required, like scale's and set-phase's)", starter.PausePool)
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

func (p *poolCmd) resumeCommand() *cobra.Command {
	return p.pauseOp("resume", "Let a paused pool act again", "resumed", "why", starter.ResumePool)
}

// pauseOp builds pause and resume: the same request to a different update.
func (p *poolCmd) pauseOp(what, short, did, reasonHelp string,
	update func(context.Context, client.Client, types.PoolKey, contract.PauseRequest) (contract.PoolStatus, error)) *cobra.Command {
	var req contract.PauseRequest
	cmd := p.poolOp(what+" POOL-ID", short,
		func(ctx context.Context, cmd *cobra.Command, c client.Client, key types.PoolKey) error {
			st, err := update(ctx, c, key, req)
			if err != nil {
				return explain(key, what, err)
			}
			return p.printState(cmd, st, did)
		})
	cmd.Flags().StringVar(&req.Reason, "reason", "", reasonHelp)
	cmd.Flags().StringVar(&req.RequestedBy, "requested-by", whoAmI(), "who asks")
	return cmd
}

func (p *poolCmd) deleteCommand() *cobra.Command {
	var req contract.DeregisterRequest
	var wait bool
	cmd := p.poolOp("delete POOL-ID", "Deregister a pool: drain and delete its nodes, then complete its workflow",
		func(ctx context.Context, cmd *cobra.Command, c client.Client, key types.PoolKey) error {
			st, err := starter.DeregisterPool(ctx, c, key, req)
			if err != nil {
				return explain(key, "deregister", err)
			}
			if wait {
				if err := c.GetWorkflow(ctx, key.WorkflowID(), "").Get(ctx, nil); err != nil {
					return fmt.Errorf("%s did not finish deregistering: %w", key.WorkflowID(), err)
				}
				// The closed run still answers queries (a worker replays it):
				// say what the deregistration released, not the node count
				// it started from.
				if final, err := starter.PoolStatus(ctx, c, key); err == nil {
					st = final
				}
				st.State = starter.StateDeregistered
				return writeOutput(cmd.OutOrStdout(), p.output, st, func(tw *tabwriter.Writer) {
					fmt.Fprintf(tw, "%s: deregistered (state deregistered, %s)\n", st.Key.WorkflowID(), releasedText(st))
				})
			}
			return p.printState(cmd, st, "deregistering")
		})
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why")
	cmd.Flags().StringVar(&req.RequestedBy, "requested-by", whoAmI(), "who asks")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every node is drained and the workflow has completed")
	return cmd
}

// releasedText says what a completed deregistration gave back: the nodes
// it drained and deleted, by name, and the machines its release of the
// node groups freed beyond them.
func releasedText(st contract.PoolStatus) string {
	var removed []string
	machines := ""
	for _, d := range st.Decisions {
		if d.RequestedBy != "deregister" {
			continue
		}
		removed = append(removed, d.Removed...)
		if d.Action == "release" {
			machines = "; " + d.Outcome
		}
	}
	if len(removed) == 0 {
		return "released no node" + machines
	}
	return fmt.Sprintf("released %s: %s%s", plural(len(removed), "node", "nodes"), strings.Join(removed, ", "), machines)
}

// printState reports an update's answer: one line, or the full status.
func (p *poolCmd) printState(cmd *cobra.Command, st contract.PoolStatus, did string) error {
	return writeOutput(cmd.OutOrStdout(), p.output, st, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "%s: %s (state %s, %s)\n", st.Key.WorkflowID(), did, st.State, plural(st.Nodes, "node", "nodes"))
	})
}

// durationFlag reads a types.Duration flag ("90m", "2h").
type durationFlag types.Duration

func (d *durationFlag) String() string { return types.Duration(*d).String() }
func (d *durationFlag) Type() string   { return "duration" }
func (d *durationFlag) Set(v string) error {
	parsed, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	*d = durationFlag(parsed)
	return nil
}
