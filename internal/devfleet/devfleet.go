// Package devfleet builds the simulated fleet `visor dev` runs: one sim
// cluster per declared cluster, observed and drained through the real
// Kubernetes connector over the sim's clientset, so the demo exercises the
// same code paths a real cluster does.
package devfleet

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/workers"
)

// Fleet is every simulated cluster of a spec file.
type Fleet struct {
	Sims     map[string]*sim.Fleet
	Clusters workers.StaticClusters
	// demoDir is where `visor demo pods` leaves requests ("" takes none).
	demoDir string
	logger  *slog.Logger
}

// Options tune the simulation.
type Options struct {
	// StateDir holds one state file per cluster; "" keeps state in memory.
	StateDir       string
	ProvisionDelay time.Duration
	Logger         *slog.Logger
	// TokenDir holds each cluster's enrollment token (<id>.token); the
	// watcher signs its reports with it.
	TokenDir string
}

// TokenPath is where the cluster's enrollment token is kept.
func TokenPath(dir, cluster string) string { return filepath.Join(dir, cluster+".token") }

// New builds the sims for the spec's clusters (provider "sim" only) and
// starts the demand each pool's demo section asks for.
func New(spec starter.SpecFile, opts Options) (*Fleet, error) {
	f := &Fleet{Sims: map[string]*sim.Fleet{}, Clusters: workers.StaticClusters{}, logger: opts.Logger}
	if opts.StateDir != "" {
		f.demoDir = DemoDir(opts.StateDir)
	}
	for _, c := range spec.Clusters {
		if c.Provider != "sim" {
			continue
		}
		cfg := sim.Config{Cluster: c.ID, Provider: c.Provider, ProvisionDelay: opts.ProvisionDelay, Logger: opts.Logger}
		// Faults come from the spec file's faults section; none by default.
		faults := spec.Faults[c.ID]
		cfg.Faults, cfg.Seed = sim.FaultsFromSpec(faults.FaultSpec), faults.Seed
		if opts.StateDir != "" {
			cfg.StatePath = filepath.Join(opts.StateDir, "sim-"+c.ID+".json")
		}
		s, err := sim.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("simulated cluster %s: %w", c.ID, err)
		}
		f.Sims[c.ID] = s
		f.Clusters[c.ID] = connectors.Cluster{
			ID: c.ID,
			// Wrapped as a worker's clusters file does (clusterconfig), so
			// `visor dev` refuses the same bad arguments a real cloud's
			// worker would.
			Provider: connectors.Checked(s),
			Observer: kubernetes.NewObserver(s.Clientset(), kubernetes.Config{Cluster: c.ID, Provider: c.Provider, Dynamic: s.Dynamic()}),
			Drainer:  kubernetes.NewDrainer(s.Clientset(), kubernetes.DrainerConfig{}),
		}
		if opts.TokenDir != "" {
			cl := f.Clusters[c.ID]
			cl.EnrollmentToken = connectors.CredentialRef("file:" + TokenPath(opts.TokenDir, c.ID))
			f.Clusters[c.ID] = cl
		}
	}
	for _, p := range spec.Pools {
		s, ok := f.Sims[p.Key.Cluster]
		if !ok || p.Demo == nil {
			continue
		}
		d := p.Demo
		profile := sim.DemandProfile{
			Shape: sim.Shape(d.Shape), Pods: d.Pods, PeakPods: d.PeakPods, Period: d.Period,
			BurstPods: d.BurstPods, BurstFor: d.BurstFor, Requests: d.Requests,
		}
		if err := s.AddDemand(p.Key, profile); err != nil {
			return nil, fmt.Errorf("demand for %s: %w", p.Key.WorkflowID(), err)
		}
	}
	return f, nil
}

// Run steps every sim until ctx ends, and takes `visor demo pods`
// requests on the same tick.
func (f *Fleet) Run(ctx context.Context, tick time.Duration) {
	for _, s := range f.Sims {
		go func() { _ = s.Run(ctx, tick) }()
	}
	if f.demoDir == "" {
		return
	}
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := f.TakeDemoRequests(f.demoDir); err != nil && f.logger != nil {
					f.logger.Warn("demo requests", "dir", f.demoDir, "error", err)
				}
			}
		}
	}()
}

// Save writes every sim's state.
func (f *Fleet) Save() error {
	for id, s := range f.Sims {
		if err := s.Save(); err != nil {
			return fmt.Errorf("save simulated cluster %s: %w", id, err)
		}
	}
	return nil
}
