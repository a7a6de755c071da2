package clusterconfig

import (
	"time"

	"github.com/hanzoai/visor-fleet/connectors/sim"
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
}

// SimFaults is sim.FaultConfig with durations written as "2s"; the same
// section `visor dev`'s spec file takes.
type SimFaults = sim.FaultSpec

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
		Faults:         c.Faults.Config(),
	}
}
