package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
)

// applyOutcome is one pool's line of `pool apply`.
type applyOutcome struct {
	Pool   string `json:"pool"`
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
}

func (p *poolCmd) applyCommand() *cobra.Command {
	var file, taskQueue string
	cmd := &cobra.Command{
		Use:   "apply -f pools.yaml",
		Short: "Register or update every pool of a spec file, idempotently",
		Long: `apply reads the whole file and refuses it, naming file, pool and field, before anything
is started. Then each pool is registered or updated with update-with-start: a new pool is
started, a running one gets the set-policy update (which the pool validates), and a pool
whose policy already matches is left alone, so applying the same file twice changes nothing.
The file's clusters section is not enrolled here: use visor cluster enroll.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("say which spec file to apply with -f FILE")
			}
			spec, err := starter.LoadSpecFile(file)
			if err != nil {
				return err
			}
			c, err := p.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			outcomes := make([]applyOutcome, 0, len(spec.Pools))
			var failed []error
			for _, entry := range spec.Pools {
				key := entry.Key
				o := applyOutcome{Pool: key.WorkflowID()}
				res, err := starter.ApplyPool(cmd.Context(), c, entry.PoolSpec, taskQueue)
				if err != nil {
					err = explain(key, "the policy", err)
					o.Result, o.Error = "failed", err.Error()
					failed = append(failed, err)
				} else {
					o.Result = string(res)
				}
				outcomes = append(outcomes, o)
			}
			if err := writeOutput(cmd.OutOrStdout(), p.output, outcomes, func(tw *tabwriter.Writer) {
				fmt.Fprintln(tw, "POOL\tRESULT")
				for _, o := range outcomes {
					fmt.Fprintf(tw, "%s\t%s\n", o.Pool, o.Result)
				}
			}); err != nil {
				return err
			}
			if len(spec.Clusters) > 0 && p.output == outputTable {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s declares %d clusters; pool apply does not enroll them (visor cluster enroll does)\n", file, len(spec.Clusters))
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d pools not applied:\n%w", len(failed), len(spec.Pools), errors.Join(failed...))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "spec file of pools (the format of examples/pools.yaml)")
	cmd.Flags().StringVar(&taskQueue, "task-queue", "", "task queue for newly started pools (default "+contract.DefaultTaskQueue+")")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	return cmd
}
