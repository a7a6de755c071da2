package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/examples"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/workers"
)

type devFlags struct {
	dataDir        string
	memory         bool
	ip             string
	grpcPort       int
	uiPort         int
	poolsFile      string
	simTick        time.Duration
	provisionDelay time.Duration
	metricsAddr    string
}

func newDevCommand(g *globalFlags) *cobra.Command {
	f := &devFlags{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run everything in one process: Temporal server (SQLite), Web UI, worker and a simulated fleet",
		Long: `visor dev runs the embedded default: a Temporal server persisting to SQLite under
--data-dir, the Temporal Web UI, a worker, and a simulated fleet with demo pools from
--pools (the bundled examples/pools.yaml when not given). Ctrl-C stops it; starting it
again resumes every pool where it was.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDev(cmd.Context(), g, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dataDir, "data-dir", ".visor", "directory for the SQLite files and simulated fleet state")
	fl.BoolVar(&f.memory, "memory", false, "keep everything in memory (throwaway)")
	fl.StringVar(&f.ip, "ip", "127.0.0.1", "address to listen on")
	fl.IntVar(&f.grpcPort, "grpc-port", 7233, "Temporal frontend gRPC port")
	fl.IntVar(&f.uiPort, "ui-port", 8233, "Temporal Web UI port")
	fl.StringVar(&f.poolsFile, "pools", "", "spec file of clusters and pools to register (default: bundled demo)")
	fl.DurationVar(&f.simTick, "sim-tick", time.Second, "how often the simulated cluster schedules pods and boots nodes")
	fl.DurationVar(&f.provisionDelay, "provision-delay", 10*time.Second, "how long a simulated node takes to become Ready")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9464)")
	return cmd
}

func runDev(ctx context.Context, g *globalFlags, f *devFlags) error {
	log := g.logger()
	spec, err := loadDevSpec(f.poolsFile)
	if err != nil {
		return err
	}
	stateDir := f.dataDir
	if f.memory {
		if stateDir, err = os.MkdirTemp("", "visor-dev-"); err != nil {
			return err
		}
		defer os.RemoveAll(stateDir)
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return fmt.Errorf("data directory %s: %w", stateDir, err)
	}

	started := time.Now()
	srv, err := devserver.Start(ctx, devserver.Options{
		DataDir: f.dataDir, Memory: f.memory, IP: f.ip, GRPCPort: f.grpcPort, UIPort: f.uiPort,
		SearchAttributes: starter.SearchAttributeTypes(), LogLevel: g.logLevel,
		LogFile: filepath.Join(stateDir, "temporal.log"),
	})
	if err != nil {
		return err
	}
	defer srv.Stop()

	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: g.sdkLogger()})
	if err != nil {
		return err
	}
	defer c.Close()

	fleet, err := devfleet.New(spec, devfleet.Options{StateDir: stateDir, ProvisionDelay: f.provisionDelay, Logger: log})
	if err != nil {
		return err
	}
	ledger, err := metering.OpenLedger(filepath.Join(stateDir, "meter.db"))
	if err != nil {
		return err
	}
	defer ledger.Close()

	acts := &activities.Activities{Clusters: fleet.Clusters, Temporal: c, Meter: ledger}
	w := workers.New(c, contract.DefaultTaskQueue, acts, worker.Options{})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()

	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	fleet.Run(simCtx, f.simTick)

	if err := registerSpec(ctx, c, spec); err != nil {
		return err
	}
	if f.metricsAddr != "" {
		stopMetrics, err := serveMetrics(f.metricsAddr, c)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	fmt.Printf("visor dev is up in %s\n  Temporal gRPC  %s (namespace %s)\n", time.Since(started).Round(time.Millisecond), srv.Address(), srv.Namespace())
	if ui := srv.UIAddress(); ui != "" {
		fmt.Printf("  Web UI         %s/namespaces/%s/workflows\n", ui, srv.Namespace())
	}
	fmt.Printf("  state          %s\n  %d clusters, %d pools registered; Ctrl-C to stop\n", stateDir, len(spec.Clusters), len(spec.Pools))
	<-ctx.Done()
	fmt.Println("stopping visor dev…")
	stopSim()
	return fleet.Save()
}

func loadDevSpec(path string) (starter.SpecFile, error) {
	if path == "" {
		return starter.ParseSpecFile("examples/pools.yaml (bundled)", examples.Pools)
	}
	return starter.LoadSpecFile(path)
}

// registerSpec enrolls the clusters and applies the pools; both are
// idempotent, so a restart changes nothing that is already running.
func registerSpec(ctx context.Context, c client.Client, spec starter.SpecFile) error {
	for _, d := range spec.Clusters {
		if _, _, err := starter.EnrollCluster(ctx, c, d, ""); err != nil {
			return err
		}
	}
	for _, p := range spec.Pools {
		if _, err := starter.ApplyPool(ctx, c, p.PoolSpec, ""); err != nil {
			return err
		}
	}
	return nil
}
