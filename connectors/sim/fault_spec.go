package sim

import (
	"github.com/hanzoai/visor-fleet/types"
)

// FaultSpec is FaultConfig as a spec file or a worker's clusters file
// writes it: JSON names, durations as "2s". The zero value injects nothing.
type FaultSpec struct {
	RetryableRate               float64        `json:"retryableRate,omitempty"`
	RateLimitRate               float64        `json:"rateLimitRate,omitempty"`
	RetryAfter                  types.Duration `json:"retryAfter,omitempty"`
	InsufficientCapacitySizes   []string       `json:"insufficientCapacitySizes,omitempty"`
	CreateSucceedsButErrorsRate float64        `json:"createSucceedsButErrorsRate,omitempty"`
	NeverJoinsRate              float64        `json:"neverJoinsRate,omitempty"`
	GoesNotReadyRate            float64        `json:"goesNotReadyRate,omitempty"`
	TerminatedRate              float64        `json:"terminatedRate,omitempty"`
	FaultAfter                  types.Duration `json:"faultAfter,omitempty"`
	LeakRate                    float64        `json:"leakRate,omitempty"`
	CallLatency                 types.Duration `json:"callLatency,omitempty"`
	CallLatencyJitter           types.Duration `json:"callLatencyJitter,omitempty"`
}

// Config is the spec as the fleet takes it.
func (s FaultSpec) Config() FaultConfig {
	return FaultConfig{
		RetryableRate:               s.RetryableRate,
		RateLimitRate:               s.RateLimitRate,
		RetryAfter:                  s.RetryAfter.D(),
		InsufficientCapacitySizes:   s.InsufficientCapacitySizes,
		CreateSucceedsButErrorsRate: s.CreateSucceedsButErrorsRate,
		NeverJoinsRate:              s.NeverJoinsRate,
		GoesNotReadyRate:            s.GoesNotReadyRate,
		TerminatedRate:              s.TerminatedRate,
		FaultAfter:                  s.FaultAfter.D(),
		LeakRate:                    s.LeakRate,
		CallLatency:                 s.CallLatency.D(),
		CallLatencyJitter:           s.CallLatencyJitter.D(),
	}
}

// Problems checks the spec before any fleet exists, naming each bad field
// as the file spells it ("leakRate"). Sizes are checked against the
// catalog later, when the fleet is built.
func (s FaultSpec) Problems() []FieldProblem {
	return s.Config().problems(nil, true)
}
