package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Config describes one simulated cluster and its cloud.
type Config struct {
	// Cluster is the cluster ID pools on this fleet are keyed by.
	Cluster string
	// Provider is the provider name in pool keys; default "sim".
	Provider string
	// ProvisionDelay is how long a new machine's node stays NotReady. Zero
	// means Ready at the next Step.
	ProvisionDelay time.Duration
	// StatePath is the JSON file the fleet persists to; "" keeps it in memory.
	StatePath string
	// Clock is the fleet's time source for provider calls and Run; default time.Now.
	Clock func() time.Time
	// Catalog is the sizes offered; default DefaultCatalog().
	Catalog []types.InstanceType
	// Faults are injected into provider calls.
	Faults FaultConfig
	// Seed makes fault injection reproducible.
	Seed int64
	// Logger receives Run's step failures; default slog.Default().
	Logger *slog.Logger
}

// FaultConfig injects provider failures, drawn from a generator seeded by
// Config.Seed so a test sees the same sequence every run.
type FaultConfig struct {
	// RetryableRate is the share of calls failing with connectors.Retryable.
	RetryableRate float64 `json:"retryableRate,omitempty"`
	// RateLimitRate is the share of calls failing with connectors.RateLimited.
	RateLimitRate float64 `json:"rateLimitRate,omitempty"`
	// RetryAfter is the hint rate-limited errors carry; default 1s.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// InsufficientCapacitySizes cannot launch machines: creating a group
	// of such a size, or raising its target, fails InsufficientCapacity.
	InsufficientCapacitySizes []string `json:"insufficientCapacitySizes,omitempty"`
	// CreateSucceedsButErrorsRate is the share of mutating calls that are
	// applied and then answer a Retryable error, as a timeout after the
	// request reached the provider does.
	CreateSucceedsButErrorsRate float64 `json:"createSucceedsButErrorsRate,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.Provider == "" {
		c.Provider = "sim"
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if len(c.Catalog) == 0 {
		c.Catalog = DefaultCatalog()
	}
	if c.Faults.RetryAfter == 0 {
		c.Faults.RetryAfter = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if err := types.ValidateDNSLabel("config.Cluster", c.Cluster); err != nil {
		errs = append(errs, err)
	}
	if err := types.ValidateDNSLabel("config.Provider", c.Provider); err != nil {
		errs = append(errs, err)
	}
	if c.ProvisionDelay < 0 {
		errs = append(errs, fmt.Errorf("config.ProvisionDelay must not be negative, got %s", c.ProvisionDelay))
	}
	seen := map[string]bool{}
	for i, t := range c.Catalog {
		switch {
		case types.ValidateDNSLabel("name", t.Name) != nil:
			errs = append(errs, fmt.Errorf("config.Catalog[%d]: %w", i, types.ValidateDNSLabel("name", t.Name)))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("config.Catalog[%d]: size %q is listed twice", i, t.Name))
		case t.Allocatable().IsNegative() || t.MilliCPU <= 0 || t.Memory <= 0 || t.MaxPods <= 0:
			errs = append(errs, fmt.Errorf("config.Catalog[%d] %q: CPU, memory and max pods must be positive and exceed the overhead", i, t.Name))
		}
		seen[t.Name] = true
	}
	return errors.Join(append(errs, c.Faults.validate(seen))...)
}

func (f FaultConfig) validate(sizes map[string]bool) error {
	var errs []error
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"RetryableRate", f.RetryableRate},
		{"RateLimitRate", f.RateLimitRate},
		{"CreateSucceedsButErrorsRate", f.CreateSucceedsButErrorsRate},
	} {
		if r.v < 0 || r.v > 1 {
			errs = append(errs, fmt.Errorf("faults.%s must be within [0, 1], got %v", r.name, r.v))
		}
	}
	if f.RetryableRate+f.RateLimitRate > 1 {
		errs = append(errs, fmt.Errorf("faults.RetryableRate + faults.RateLimitRate must not exceed 1, got %v", f.RetryableRate+f.RateLimitRate))
	}
	if f.RetryAfter < 0 {
		errs = append(errs, fmt.Errorf("faults.RetryAfter must not be negative, got %s", f.RetryAfter))
	}
	for _, s := range f.InsufficientCapacitySizes {
		if !sizes[s] {
			errs = append(errs, fmt.Errorf("faults.InsufficientCapacitySizes: %q is not in the catalog", s))
		}
	}
	return errors.Join(errs...)
}
