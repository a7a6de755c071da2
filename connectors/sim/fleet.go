// Package sim is an in-process simulated cloud plus Kubernetes cluster:
// node groups whose machines register as Node objects after a provisioning
// delay, a scheduler binding pods to nodes with room, and per-pool demand
// generators. The Kubernetes side is a client-go fake clientset holding
// real Node and Pod objects, so the real observer and drainer run over it
// unchanged. `visor dev` runs one so pools scale with no configuration.
package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// Fleet is one simulated cluster and the cloud its nodes come from.
// It implements connectors.Provider; all methods are safe for concurrent use.
type Fleet struct {
	cfg     Config
	catalog map[string]types.InstanceType
	cs      *fake.Clientset
	dyn     dynamic.Interface // CapacityBuffers (buffers.go)
	// writes counts every write through the clientset (ours, the
	// drainer's) and to the sim's own state, so an idle Step neither
	// relists nor saves.
	writes atomic.Uint64

	mu          sync.Mutex
	st          simState
	faults      FaultConfig
	rng         *rand.Rand
	spotRng     *rand.Rand
	forced      map[MachineFault]int
	latency     *latency
	savedWrites uint64
	// budgetsSynced is the write count PDB statuses were computed at.
	budgetsSynced uint64
	cache         listCache
}

var (
	_ connectors.Provider   = (*Fleet)(nil)
	_ connectors.LeakFinder = (*Fleet)(nil)
)

// New builds a fleet, resuming from cfg.StatePath when that file exists.
func New(cfg Config) (*Fleet, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sim: invalid config: %w", err)
	}
	f := &Fleet{
		cfg:     cfg,
		catalog: make(map[string]types.InstanceType, len(cfg.Catalog)),
		st:      newSimState(),
		faults:  cfg.Faults,
		rng:     rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		spotRng: spotRand(cfg.Seed),
		forced:  map[MachineFault]int{},
		latency: newLatency(cfg.Seed),
	}
	for _, t := range cfg.Catalog {
		f.catalog[t.Name] = t
	}
	f.cs = newClientset(&f.writes)
	f.dyn = newBufferClient(f.cs)
	if err := f.load(); err != nil {
		return nil, err
	}
	if err := f.ensureDaemonSet(context.Background()); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return f, nil
}

// Clientset is the simulated cluster's Kubernetes API, for the observer
// and drainer.
func (f *Fleet) Clientset() k8s.Interface { return f.cs }

// Name is the provider name pools on this fleet carry.
func (f *Fleet) Name() string { return f.cfg.Provider }

// Cluster is the simulated cluster's ID.
func (f *Fleet) Cluster() string { return f.cfg.Cluster }

// Catalog returns the sizes this fleet offers.
func (f *Fleet) Catalog(ctx context.Context) ([]types.InstanceType, error) {
	defer f.enter(ctx)()
	if err := f.callFault(ctx, "Catalog"); err != nil {
		return nil, err
	}
	return append([]types.InstanceType(nil), f.cfg.Catalog...), nil
}

// SetFaults replaces the injected faults, e.g. to start a chaos phase in a
// demo or to end one in a test.
func (f *Fleet) SetFaults(faults FaultConfig) error {
	sizes := make(map[string]bool, len(f.catalog))
	for name := range f.catalog {
		sizes[name] = true
	}
	if faults.RetryAfter == 0 {
		faults.RetryAfter = f.cfg.Faults.RetryAfter
	}
	if err := faults.validate(sizes); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = faults
	return nil
}

// checkPool rejects pools that do not belong to this fleet.
func (f *Fleet) checkPool(pool types.PoolKey) error {
	if err := pool.Validate(); err != nil {
		return fmt.Errorf("pool: %w", err)
	}
	if pool.Provider != f.cfg.Provider {
		return fmt.Errorf("pool %s: provider %q is not this fleet's %q", pool, pool.Provider, f.cfg.Provider)
	}
	if pool.Cluster != f.cfg.Cluster {
		return fmt.Errorf("pool %s: cluster %q is not this fleet's %q", pool, pool.Cluster, f.cfg.Cluster)
	}
	return nil
}

// touch records a change to the sim's own state.
func (f *Fleet) touch() { f.writes.Add(1) }

func (f *Fleet) permanent(op string, err error) error {
	return errclass.New(errclass.Permanent, f.cfg.Provider, op, err)
}
