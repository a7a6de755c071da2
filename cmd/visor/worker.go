package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/metering/httpsink"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
	"github.com/hanzoai/visor-fleet/workflows"
)

type workerFlags struct {
	taskQueue        string
	ledgerPath       string
	meterEndpoint    string
	meterToken       string
	registerSAs      bool
	metricsAddr      string
	maxConcurrentAct int
	stickyCacheSize  int
	clustersPath     string
	systemKey        string
	trust            string
}

func newWorkerCommand(g *globalFlags) *cobra.Command {
	f := &workerFlags{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a worker against any Temporal cluster (the production shape)",
		Long: `visor worker polls a task queue on the Temporal cluster given by --address/--namespace
(or TEMPORAL_ADDRESS/TEMPORAL_NAMESPACE) and runs the pool and cluster workflows and their
activities. A tenant's own cloud account is served by a worker deployed there, polling that
tenant's task queue (--task-queue), so its credentials never leave it.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if f.stickyCacheSize < 0 {
				return fmt.Errorf("--sticky-cache-size %d: give a count of workflows, or 0 for the SDK's default (10,000)", f.stickyCacheSize)
			}
			if f.stickyCacheSize > 0 {
				// Process-wide, and only before the first worker starts.
				worker.SetStickyWorkflowCacheSize(f.stickyCacheSize)
			}
			// Checked before anything starts, so a bad file fails fast.
			var clusters *clusterconfig.Source
			var orgLimits map[string]types.OrgPolicy
			if f.clustersPath != "" {
				file, err := clusterconfig.Load(f.clustersPath)
				if err != nil {
					return err
				}
				clusters, orgLimits = clusterconfig.NewSource(file, clusterconfig.Options{}), file.OrgLimits()
				defer func() {
					// Bounded: a vCenter that stopped answering must not hold up exit.
					closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = clusters.Close(closeCtx)
				}()
			}
			systemKey, trust, err := loadWorkerAuth(f.systemKey, f.trust)
			if err != nil {
				return err
			}
			var meter metering.Sink
			var ledger *meterledger.Ledger
			switch {
			case f.ledgerPath != "" && f.meterEndpoint != "":
				return fmt.Errorf("--meter-ledger and --meter-endpoint are exclusive: pick one sink")
			case f.ledgerPath != "":
				l, err := meterledger.Open(f.ledgerPath)
				if err != nil {
					return err
				}
				defer l.Close()
				meter, ledger = l, l
			case f.meterEndpoint != "":
				// The token is a reference, resolved by the sink on this
				// worker; it never travels through Temporal.
				sink, err := httpsink.New(httpsink.Config{Endpoint: f.meterEndpoint, Token: connectors.CredentialRef(f.meterToken)}, nil)
				if err != nil {
					return err
				}
				meter = sink
			}
			metrics, err := newMetrics(f.metricsAddr)
			if err != nil {
				return err
			}
			defer metrics.Stop()
			c, err := g.dial(ctx, metrics.Handler)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := metrics.watchFleet(c, ledger); err != nil {
				return err
			}
			if f.registerSAs {
				if err := starter.EnsureSearchAttributes(ctx, c, g.connectOptions().Namespace); err != nil {
					return err
				}
			}
			acts := &activities.Activities{Temporal: c}
			if clusters != nil {
				acts.Clusters = clusters
			}
			acts.Meter, acts.SystemKey, acts.TrustKeys, acts.OrgLimits = meter, systemKey, trust, orgLimits
			if ref := g.connectOptions().CodecKeys; ref != "" {
				keys, err := codec.LoadKeys(ref)
				if err != nil {
					return err
				}
				acts.Payloads = codec.NewDataConverter(keys) // the pools' memos, as the client encrypted them
			}
			if err := workers.CheckDowngrade(ctx, c, g.connectOptions().Namespace, workflows.Changes); errors.Is(err, workers.ErrDowngradeUnchecked) {
				fmt.Fprintf(os.Stderr, "visor worker: %v\n", err)
			} else if err != nil {
				return err
			}
			w := workers.New(c, f.taskQueue, acts, worker.Options{MaxConcurrentActivityExecutionSize: f.maxConcurrentAct})
			fmt.Printf("visor worker polling %q on %s (namespace %s)\n", f.taskQueue, g.connectOptions().Address, g.connectOptions().Namespace)
			return w.Run(worker.InterruptCh())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.taskQueue, "task-queue", contract.DefaultTaskQueue, "task queue to poll")
	fl.StringVar(&f.ledgerPath, "meter-ledger", "", "SQLite ledger file for node-hour events")
	fl.StringVar(&f.meterEndpoint, "meter-endpoint", "", "HTTP endpoint that receives node-hour events (instead of a ledger)")
	fl.StringVar(&f.meterToken, "meter-token", "", "bearer token reference for --meter-endpoint: env:NAME or file:PATH")
	fl.BoolVar(&f.registerSAs, "register-search-attributes", false, "add Visor's search attributes to the namespace if missing")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address")
	fl.IntVar(&f.maxConcurrentAct, "max-concurrent-activities", 0, "activity slots (0 = SDK default)")
	fl.IntVar(&f.stickyCacheSize, "sticky-cache-size", 0, "pool and cluster workflows this process keeps cached between their tasks (0 = the SDK's 10,000); past it, an evicted pool's next task replays its history (docs/scale.md)")
	fl.StringVar(&f.systemKey, "system-key", os.Getenv("VISOR_SYSTEM_KEY"), "system key reference (file:PATH or env:NAME): signs the watcher's signals (env VISOR_SYSTEM_KEY)")
	fl.StringVar(&f.trust, "trust", os.Getenv("VISOR_TRUST"), "trust file reference: issuer and system public keys the workflows verify with (env VISOR_TRUST)")
	fl.StringVar(&f.clustersPath, "clusters", "", "YAML file of the clusters this worker reaches (format: deploy/worker-clusters.example.yaml)")
	return cmd
}
