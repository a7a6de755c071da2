package clusterconfig

import (
	"context"
	"reflect"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/connectors/sim/simremote"
	"github.com/hanzoai/visor-fleet/types"
)

// defaultSimTick is how often a simulated cluster steps when the file does
// not say.
const defaultSimTick = time.Second

// SimConfig is a simulated cluster served by this worker: its own in-process
// cloud and Kubernetes API, stepped in the background (for demos, load
// tests and staging a worker's deployment without a cloud account).
type SimConfig struct {
	// Tick is how often the simulation steps; default 1s.
	Tick types.Duration `json:"tick,omitempty"`
	// ProvisionDelay is how long a new node stays NotReady.
	ProvisionDelay types.Duration `json:"provisionDelay,omitempty"`
	// StatePath persists the simulation across restarts; empty keeps it
	// in memory. A relative path is relative to the clusters file.
	StatePath string `json:"statePath,omitempty"`
	// Catalog overrides the sim's default sizes.
	Catalog []types.InstanceType `json:"catalog,omitempty"`
	// Faults injected into provider calls.
	Faults SimFaults `json:"faults,omitempty"`
	// Seed makes fault injection reproducible.
	Seed int64 `json:"seed,omitempty"`
	// Endpoint, http://host:port, is a sim host serving this cluster
	// (connectors/sim/simremote): the worker uses that one cloud and
	// cluster instead of running its own, so several workers share a
	// fleet. The simulation's own settings are then the host's, not here.
	Endpoint string `json:"endpoint,omitempty"`
}

// SimFaults is sim.FaultConfig with durations written as "2s"; the same
// section `visor dev`'s spec file takes.
type SimFaults = types.FaultSpec

func (c SimConfig) tick() time.Duration {
	if c.Tick <= 0 {
		return defaultSimTick
	}
	return c.Tick.D()
}

// simConfig is the sim package's configuration for cluster id.
func (c SimConfig) simConfig(id string) sim.Config {
	return sim.Config{
		Cluster:        id,
		Provider:       Sim,
		ProvisionDelay: c.ProvisionDelay.D(),
		StatePath:      c.StatePath,
		Catalog:        c.Catalog,
		Seed:           c.Seed,
		Faults:         sim.FaultsFromSpec(c.Faults),
	}
}

// simKind is a simulated cluster, served in-process by this worker; its
// configuration is this package's SimConfig, so it registers here.
var simKind = connectors.Kind{
	Name:        Sim,
	NewConfig:   func() connectors.Config { return new(SimConfig) },
	Build:       buildSim,
	Catalog:     catalogs.Sim,
	OwnsCluster: true,
}

// Validate reports what is wrong in a clusters file's sim section.
func (c *SimConfig) Validate(p connectors.Problems) {
	if c.Tick < 0 {
		p.Add("tick", "must not be negative, got %s", c.Tick)
	}
	if c.ProvisionDelay < 0 {
		p.Add("provisionDelay", "must not be negative, got %s", c.ProvisionDelay)
	}
	for _, fp := range c.Faults.Problems() {
		p.Add("faults."+fp.Field, "%s", fp.Message)
	}
	if c.Endpoint == "" {
		return
	}
	if _, err := simremote.New(c.Endpoint, "check", Sim); err != nil {
		p.Add("endpoint", "%v", err)
	}
	if c.Tick != 0 || c.ProvisionDelay != 0 || c.StatePath != "" || len(c.Catalog) > 0 || c.Seed != 0 || !reflect.ValueOf(c.Faults).IsZero() {
		p.Add("endpoint", "a cluster served by a sim host takes its tick, provisionDelay, statePath, catalog, faults and seed from the host; remove them here")
	}
}

// FilePaths is the state file, for the loader to anchor.
func (c *SimConfig) FilePaths() []*string { return []*string{&c.StatePath} }

// buildSim starts a simulated cluster stepping in the background; it runs
// until released, then saves its state.
func buildSim(_ context.Context, section connectors.Config, env connectors.BuildEnv) (connectors.Built, error) {
	var cfg SimConfig
	if c, ok := section.(*SimConfig); ok && c != nil {
		cfg = *c
	}
	if cfg.Endpoint != "" {
		remote, err := simremote.New(cfg.Endpoint, env.ClusterID, Sim)
		if err != nil {
			return connectors.Built{}, err
		}
		return connectors.Built{Provider: remote, Observer: remote, Drainer: remote}, nil
	}
	simCfg := cfg.simConfig(env.ClusterID)
	simCfg.Logger = env.Logger
	fleet, err := sim.New(simCfg)
	if err != nil {
		return connectors.Built{}, err
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fleet.Run(runCtx, cfg.tick()) }()
	client := fleet.Clientset()
	events := kubernetes.NewEventRecorder(client)
	return connectors.Built{
		Provider: fleet,
		Observer: kubernetes.NewObserver(client, kubernetes.Config{Cluster: env.ClusterID, Provider: Sim, Dynamic: fleet.Dynamic()}),
		Drainer:  kubernetes.NewDrainer(client, kubernetes.DrainerConfig{}),
		Events:   events,
		Release: func(ctx context.Context) error {
			events.Close()
			stop()
			select {
			case err := <-done:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}, nil
}
