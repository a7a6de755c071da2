package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
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
	// Catalog is the sizes offered; default catalogs.Sim().
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
	// RetryableRate is the share of calls failing with errclass.Retryable.
	RetryableRate float64 `json:"retryableRate,omitempty"`
	// RateLimitRate is the share of calls failing with errclass.RateLimited.
	RateLimitRate float64 `json:"rateLimitRate,omitempty"`
	// RetryAfter is the hint rate-limited errors carry; default 1s.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// InsufficientCapacitySizes cannot launch machines: creating a group
	// of such a size, or raising its target, fails InsufficientCapacity.
	InsufficientCapacitySizes []string `json:"insufficientCapacitySizes,omitempty"`
	// SoldOutOfferings fail InsufficientCapacity for one offering only:
	// "size/zone/capacity-type" (types.Offering.Key; empty zone: every zone).
	SoldOutOfferings []string `json:"soldOutOfferings,omitempty"`
	// CreateSucceedsButErrorsRate is the share of mutating calls that are
	// applied and then answer a Retryable error, as a timeout after the
	// request reached the provider does.
	CreateSucceedsButErrorsRate float64 `json:"createSucceedsButErrorsRate,omitempty"`

	// The machine fates below are drawn once per launched machine, so
	// their sum must not exceed 1.

	// NeverJoinsRate is the share of launched machines whose Node never
	// registers: the machine runs (and bills) at the provider, the
	// cluster never sees it.
	NeverJoinsRate float64 `json:"neverJoinsRate,omitempty"`
	// GoesNotReadyRate is the share of launched machines whose node turns
	// Ready and then, FaultAfter later, NotReady for good (kubelet stops
	// posting status; the machine stays running at the provider).
	GoesNotReadyRate float64 `json:"goesNotReadyRate,omitempty"`
	// TerminatedRate is the share of launched machines terminated out of
	// band FaultAfter after turning Ready. The group keeps its target and
	// its controller launches a replacement at the next Step, as an ASG,
	// an EKS managed node group or a DOKS node pool does.
	TerminatedRate float64 `json:"terminatedRate,omitempty"`
	// FaultAfter is how long after turning Ready a machine goes NotReady
	// or is terminated; zero: at the next Step.
	FaultAfter time.Duration `json:"faultAfter,omitempty"`

	// LeakRate is the share of machine launches that also start a second
	// machine tagged for the pool but recorded in no group, as a crash
	// between "launched" and "recorded" leaves behind. Leaked machines
	// never join the cluster; LeakedInstances finds them.
	LeakRate float64 `json:"leakRate,omitempty"`

	// SpotInterruptionRate is how often a spot machine is interrupted,
	// per machine-hour: each spot machine's notice time is drawn at launch
	// (exponential, from a stream seeded by Config.Seed), its machine
	// taken back InterruptionNotice later (interruptions.go).
	SpotInterruptionRate float64 `json:"spotInterruptionRate,omitempty"`
	// InterruptionNotice is the warning before a spot machine goes;
	// default 2 minutes, as EC2 gives.
	InterruptionNotice time.Duration `json:"interruptionNotice,omitempty"`

	// CallLatency is added to every provider call, half before it takes
	// effect and half after (outside the fleet's lock), so a crash can
	// land inside a call whose change was already applied.
	CallLatency time.Duration `json:"callLatency,omitempty"`
	// CallLatencyJitter adds up to this much more, drawn per call.
	CallLatencyJitter time.Duration `json:"callLatencyJitter,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.Provider == "" {
		c.Provider = "sim"
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if len(c.Catalog) == 0 {
		c.Catalog = catalogs.Sim()
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
	for _, p := range f.problems(sizes, false) {
		errs = append(errs, fmt.Errorf("faults.%s: %s", p.Field, p.Message))
	}
	return errors.Join(errs...)
}

// problems checks every setting with the spec's rules, naming fields by
// their JSON names when jsonNames is set (spec files), by their Go names
// otherwise. A nil sizes map skips the catalog check (the catalog is not
// known yet).
func (f FaultConfig) problems(sizes map[string]bool, jsonNames bool) []types.FieldProblem {
	name := func(goName string) string { return goName }
	if jsonNames {
		name = types.JSONFieldName
	}
	return f.spec().Check(sizes, name)
}
