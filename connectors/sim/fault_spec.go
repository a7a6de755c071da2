package sim

import (
	"github.com/hanzoai/visor-fleet/types"
)

// FaultsFromSpec is a spec file's faults section as the fleet takes it.
func FaultsFromSpec(s types.FaultSpec) FaultConfig {
	return FaultConfig{
		RetryableRate:               s.RetryableRate,
		RateLimitRate:               s.RateLimitRate,
		RetryAfter:                  s.RetryAfter.D(),
		InsufficientCapacitySizes:   s.InsufficientCapacitySizes,
		SoldOutOfferings:            s.SoldOutOfferings,
		CreateSucceedsButErrorsRate: s.CreateSucceedsButErrorsRate,
		NeverJoinsRate:              s.NeverJoinsRate,
		GoesNotReadyRate:            s.GoesNotReadyRate,
		TerminatedRate:              s.TerminatedRate,
		FaultAfter:                  s.FaultAfter.D(),
		LeakRate:                    s.LeakRate,
		SpotInterruptionRate:        s.SpotInterruptionRate,
		InterruptionNotice:          s.InterruptionNotice.D(),
		CallLatency:                 s.CallLatency.D(),
		CallLatencyJitter:           s.CallLatencyJitter.D(),
	}
}

// spec is the configuration as a spec file writes it, so both are checked
// by the one set of rules (types.FaultSpec.Check).
func (f FaultConfig) spec() types.FaultSpec {
	return types.FaultSpec{
		RetryableRate:               f.RetryableRate,
		RateLimitRate:               f.RateLimitRate,
		RetryAfter:                  types.Duration(f.RetryAfter),
		InsufficientCapacitySizes:   f.InsufficientCapacitySizes,
		SoldOutOfferings:            f.SoldOutOfferings,
		CreateSucceedsButErrorsRate: f.CreateSucceedsButErrorsRate,
		NeverJoinsRate:              f.NeverJoinsRate,
		GoesNotReadyRate:            f.GoesNotReadyRate,
		TerminatedRate:              f.TerminatedRate,
		FaultAfter:                  types.Duration(f.FaultAfter),
		LeakRate:                    f.LeakRate,
		SpotInterruptionRate:        f.SpotInterruptionRate,
		InterruptionNotice:          types.Duration(f.InterruptionNotice),
		CallLatency:                 types.Duration(f.CallLatency),
		CallLatencyJitter:           types.Duration(f.CallLatencyJitter),
	}
}
