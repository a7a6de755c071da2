package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hanzoai/visor-fleet/examples"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
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
	codecPort      int
	kube           bool
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
	hideClientFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.dataDir, "data-dir", ".visor", "directory for the SQLite files and simulated fleet state")
	fl.BoolVar(&f.memory, "memory", false, "keep everything in memory (throwaway)")
	fl.StringVar(&f.ip, "ip", "127.0.0.1", "address to listen on: loopback only, as the embedded server does not authenticate callers")
	fl.IntVar(&f.grpcPort, "grpc-port", 7233, "Temporal frontend gRPC port")
	fl.IntVar(&f.uiPort, "ui-port", 8233, "Temporal Web UI port")
	fl.StringVar(&f.poolsFile, "pools", "", "spec file of clusters and pools to register (default: bundled demo)")
	fl.DurationVar(&f.simTick, "sim-tick", time.Second, "how often the simulated cluster schedules pods and boots nodes")
	fl.DurationVar(&f.provisionDelay, "provision-delay", 10*time.Second, "how long a simulated node takes to become Ready")
	fl.IntVar(&f.codecPort, "codec-port", 8234, "codec server port (the Web UI decodes payloads through it)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9464)")
	fl.BoolVar(&f.kube, "kube", false, "run the pools on a real control plane (etcd, kube-apiserver, kube-scheduler, kwok nodes) from testsuite/kubeapi/build-binaries.sh's cache; default spec: the bundled examples/kube-pools.yaml")
	return cmd
}

func runDev(ctx context.Context, g *globalFlags, f *devFlags) error {
	// The embedded server has no caller authentication yet.
	if err := devserver.CheckListenIP(f.ip, false); err != nil {
		return err
	}
	spec, err := loadDevSpec(f.poolsFile, f.kube)
	if err != nil {
		return err
	}
	started := time.Now()
	metrics, err := newMetrics(f.metricsAddr)
	if err != nil {
		return err
	}
	defer metrics.Stop()
	var kube *devstack.Kube
	if f.kube {
		if kube, err = devstack.StartKube(ctx, spec, f.dataDir, g.logger()); err != nil {
			return err
		}
		defer kube.Stop()
	}
	opts := devstack.Options{
		Server: devserver.Options{
			DataDir: f.dataDir, Memory: f.memory, IP: f.ip, GRPCPort: f.grpcPort, UIPort: f.uiPort, CodecPort: f.codecPort, LogLevel: g.logLevel,
		},
		Spec: spec, SimTick: f.simTick, ProvisionDelay: f.provisionDelay, Logger: g.logger(),
		MetricsHandler: metrics.Handler,
	}
	if kube != nil {
		opts.Clusters = kube.Clusters
	}
	stack, err := devstack.Start(ctx, opts)
	if err != nil {
		return err
	}
	if err := metrics.watchFleet(stack.Client, stack.Ledger); err != nil {
		_ = stack.Stop()
		return err
	}
	srv := stack.Server
	fmt.Printf("visor dev is up in %s\n  Temporal gRPC  %s (namespace %s)\n", time.Since(started).Round(time.Millisecond), srv.Address(), srv.Namespace())
	if ui := srv.UIAddress(); ui != "" {
		fmt.Printf("  Web UI         %s/namespaces/%s/workflows\n", ui, srv.Namespace())
	}
	if metrics.Addr != "" {
		fmt.Printf("  metrics        http://%s/metrics\n", metrics.Addr)
	}
	printDevAuth(stack)
	if kube != nil {
		fmt.Printf("  kubernetes     KUBECONFIG=%s kubectl get nodes,pods -A -w\n", kube.Kubeconfig)
	}
	fmt.Printf("  state          %s\n  %s, %s registered; Ctrl-C to stop\n", stack.StateDir, plural(len(spec.Clusters), "cluster", "clusters"), plural(len(spec.Pools), "pool", "pools"))
	<-ctx.Done()
	fmt.Println("stopping visor dev…")
	return stack.Stop()
}

func loadDevSpec(path string, kube bool) (starter.SpecFile, error) {
	switch {
	case path == "" && kube:
		return starter.ParseSpecFile("examples/kube-pools.yaml (bundled)", examples.KubePools)
	case path == "":
		return starter.ParseSpecFile("examples/pools.yaml (bundled)", examples.Pools)
	}
	return starter.LoadSpecFile(path)
}

// hideClientFlags keeps dev's help to dev's own flags: --address,
// --namespace and the TLS flags say how a client reaches a Temporal
// server, and dev runs its own. Only --log-level applies to it.
func hideClientFlags(cmd *cobra.Command) {
	defaultHelp := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "log-level" {
				f.Hidden = true
			}
		})
		defaultHelp(c, args)
	})
}
