package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// applyOutcome is one pool's line of `pool apply`.
type applyOutcome struct {
	Pool   string `json:"pool"`
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
	// Expiry: what the spec's unwritten expireAfter did (on by default
	// for a new pool, kept for a running one).
	Expiry string `json:"expiry,omitempty"`
}

// providerQueuesEnv declares the provider task queues when the flag is not given.
const providerQueuesEnv = "VISOR_PROVIDER_QUEUES"

func (p *poolCmd) applyCommand() *cobra.Command {
	var file, taskQueue string
	var queues []string
	var concurrency int
	cmd := &cobra.Command{
		Use:   "apply -f pools.yaml",
		Short: "Register or update every pool of a spec file, idempotently",
		Long: `apply reads the whole file and checks it against the platform before anything is started:
every field (unknown ones too, with line and pool index), each pool's cluster (enrolled, same
provider, placement: regions, residency, capabilities; each cluster is asked once) and each
providerTaskQueue (only the default queue and those declared with --provider-queues or
` + providerQueuesEnv + `, comma-separated: a queue without a worker would never act). One
problem refuses the whole file, naming file, pool and field.

Then each pool is registered or updated with update-with-start, a bounded number at once: a
new pool is started, a running one gets the set-policy update (which the pool validates), and
a pool whose policy already matches is left alone, so applying the same file twice changes
nothing. If a pool fails here (the pool's own validator refused, or the server), no further
pool is started, and the report names exactly which pools were applied and which were not.
The file's clusters section is not enrolled here: use visor cluster enroll.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("say which spec file to apply with -f FILE")
			}
			if err := checkOutput(p.output); err != nil {
				return err
			}
			if concurrency < 1 {
				return fmt.Errorf("--concurrency %d: apply at least 1 pool at once", concurrency)
			}
			spec, err := starter.LoadSpecFile(file)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("provider-queues") {
				queues = splitList(os.Getenv(providerQueuesEnv))
			}
			c, err := p.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := starter.CheckApply(cmd.Context(), c, file, spec.Pools, starter.ApplyRules{ProviderQueues: queues}); err != nil {
				return fmt.Errorf("nothing applied:\n%w", err)
			}
			specs := make([]contract.PoolSpec, len(spec.Pools))
			defaulted := map[string]bool{}
			for i, e := range spec.Pools {
				specs[i] = e.PoolSpec
				if e.ExpiryDefaulted {
					defaulted[e.Key.WorkflowID()] = true
				}
			}
			opts := starter.ApplyOptions{TaskQueue: taskQueue, Concurrency: concurrency, ExpiryDefaulted: defaulted}
			if progress := progressWriter(cmd.ErrOrStderr()); progress != nil && len(specs) > 1 {
				opts.Progress = func(done, total int) { fmt.Fprintf(progress, "\rapplying pools: %d/%d", done, total) }
				defer fmt.Fprint(progress, "\r\033[K")
			}
			results, err := starter.ApplyPools(cmd.Context(), c, p.g.connectOptions().Namespace, specs, opts)
			if err != nil {
				return fmt.Errorf("nothing applied: %w", err)
			}
			outcomes, failure := summarizeApply(results)
			if err := writeOutput(cmd.OutOrStdout(), p.output, outcomes, func(tw *tabwriter.Writer) {
				fmt.Fprintln(tw, "POOL\tRESULT")
				for _, o := range outcomes {
					fmt.Fprintf(tw, "%s\t%s\n", o.Pool, o.Result)
				}
			}); err != nil {
				return err
			}
			if p.output == outputTable {
				for _, o := range outcomes {
					if o.Expiry != "" {
						fmt.Fprintf(cmd.ErrOrStderr(), "note: %s: %s\n", o.Pool, o.Expiry)
					}
				}
			}
			if len(spec.Clusters) > 0 && p.output == outputTable {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s declares %s; pool apply does not enroll clusters (visor cluster enroll does)\n", file, plural(len(spec.Clusters), "cluster", "clusters"))
			}
			if demo := demoPools(spec); len(demo) > 0 && p.output == outputTable {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: pool apply ignores the demo section of %s (only visor dev's simulated fleet reads it at start; for a running visor dev use `visor demo pods POOL --count N`)\n", strings.Join(demo, ", "))
			}
			return failure
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", "spec file of pools (the format of examples/pools.yaml)")
	fl.StringVar(&taskQueue, "task-queue", "", "task queue for newly started pools (default "+contract.DefaultTaskQueue+")")
	fl.StringSliceVar(&queues, "provider-queues", nil, "provider task queues the platform serves, besides the default (env "+providerQueuesEnv+")")
	fl.IntVar(&concurrency, "concurrency", starter.DefaultApplyConcurrency, "pools applied at once")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	return cmd
}

// summarizeApply turns the outcomes into report lines and, if any pool
// failed, an error that names what was applied, what failed and what was
// not attempted.
func summarizeApply(results []starter.PoolApplied) ([]applyOutcome, error) {
	outcomes := make([]applyOutcome, 0, len(results))
	var applied, notAttempted []string
	var failed []error
	for _, r := range results {
		o := applyOutcome{Pool: r.Pool}
		switch {
		case !r.Attempted:
			o.Result = "not attempted"
			notAttempted = append(notAttempted, r.Pool)
		case r.Err != nil:
			err := explainApply(r.Pool, r.Err)
			o.Result, o.Error = "failed", err.Error()
			failed = append(failed, err)
		default:
			o.Result, o.Expiry = string(r.Result), r.Expiry
			applied = append(applied, r.Pool)
		}
		outcomes = append(outcomes, o)
	}
	if len(failed) == 0 {
		return outcomes, nil
	}
	msg := fmt.Sprintf("%d of %s not applied:\n%s", len(failed), plural(len(results), "pool", "pools"), errors.Join(failed...))
	msg += "\napplied: " + listOrNone(applied)
	if len(notAttempted) > 0 {
		msg += "\nnot attempted (after the failure): " + listOrNone(notAttempted)
	}
	return outcomes, errors.New(msg)
}

// explainApply is explain for a pool named by its ID.
func explainApply(id string, err error) error {
	if key, perr := types.ParsePoolID(id); perr == nil {
		return explain(key, "the policy", err)
	}
	return err
}

func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// splitList reads a comma-separated list, ignoring blanks.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// progressWriter is w when it is a terminal, else nil: progress lines
// would only clutter a log or a pipe.
func progressWriter(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return f
}

// demoPools names the pools whose entry has a demo section.
func demoPools(spec starter.SpecFile) []string {
	var out []string
	for _, e := range spec.Pools {
		if e.Demo != nil {
			out = append(out, e.Key.WorkflowID())
		}
	}
	return out
}
