package sim

import (
	"context"
	"errors"
	"slices"

	"github.com/hanzoai/visor-fleet/connectors"
)

// callFault draws the transport-level faults any call may hit before it
// reaches the provider: a transient failure or a throttle. Called with f.mu held.
func (f *Fleet) callFault(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return connectors.NewError(connectors.Retryable, f.cfg.Provider, op, err)
	}
	r := f.rng.Float64()
	switch {
	case r < f.faults.RetryableRate:
		return connectors.NewError(connectors.Retryable, f.cfg.Provider, op,
			errors.New("simulated transient failure: 503 service unavailable"))
	case r < f.faults.RetryableRate+f.faults.RateLimitRate:
		e := connectors.NewError(connectors.RateLimited, f.cfg.Provider, op,
			errors.New("simulated throttle: 429 too many requests"))
		e.RetryAfter = f.faults.RetryAfter
		return e
	}
	return nil
}

// capacityFault refuses to launch machines of a size listed as unavailable.
func (f *Fleet) capacityFault(op, size string) error {
	if slices.Contains(f.faults.InsufficientCapacitySizes, size) {
		return connectors.NewError(connectors.InsufficientCapacity, f.cfg.Provider, op,
			errors.New("simulated insufficient capacity for size "+size))
	}
	return nil
}

// lostAnswer is the nasty fault: the request was applied, but the caller
// sees an error and will retry it with the same idempotency key.
func (f *Fleet) lostAnswer(op string) error {
	if f.faults.CreateSucceedsButErrorsRate > 0 && f.rng.Float64() < f.faults.CreateSucceedsButErrorsRate {
		return connectors.NewError(connectors.Retryable, f.cfg.Provider, op,
			errors.New("simulated timeout: the request was applied but its answer was lost"))
	}
	return nil
}
