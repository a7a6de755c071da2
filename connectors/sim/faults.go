package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// poolRead opens a call that reads the pool's state: the pool must be the
// fleet's, and the call draws its transport faults. Called with f.mu held.
func (f *Fleet) poolRead(ctx context.Context, op string, pool types.PoolKey) error {
	if err := f.checkPool(pool); err != nil {
		return f.permanent(op, err)
	}
	return f.callFault(ctx, op)
}

// callFault draws the transport-level faults any call may hit before it
// reaches the provider: a transient failure or a throttle. Called with f.mu held.
func (f *Fleet) callFault(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return errclass.New(errclass.Retryable, f.cfg.Provider, op, err)
	}
	r := f.rng.Float64()
	switch {
	case r < f.faults.RetryableRate:
		return errclass.New(errclass.Retryable, f.cfg.Provider, op,
			errors.New("simulated transient failure: 503 service unavailable"))
	case r < f.faults.RetryableRate+f.faults.RateLimitRate:
		e := errclass.New(errclass.RateLimited, f.cfg.Provider, op,
			errors.New("simulated throttle: 429 too many requests"))
		e.RetryAfter = f.faults.RetryAfter
		return e
	}
	return nil
}

// capacityFault refuses to launch machines of a size listed as
// unavailable, or of an offering sold out (by the faults, or by the
// catalog's Available).
func (f *Fleet) capacityFault(op, size, zone string, ct types.CapacityType) error {
	if slices.Contains(f.faults.InsufficientCapacitySizes, size) {
		return errclass.New(errclass.InsufficientCapacity, f.cfg.Provider, op,
			errors.New("simulated insufficient capacity for size "+size))
	}
	o := types.Offering{Zone: zone, CapacityType: ct.Or()}
	everyZone := types.Offering{CapacityType: ct.Or()}
	if slices.Contains(f.faults.SoldOutOfferings, o.Key(size)) || slices.Contains(f.faults.SoldOutOfferings, everyZone.Key(size)) {
		return errclass.New(errclass.InsufficientCapacity, f.cfg.Provider, op,
			fmt.Errorf("simulated insufficient capacity: %s sold out", o.Key(size)))
	}
	if t, ok := f.catalog[size]; ok && len(t.Offerings) > 0 {
		soldOut := true
		for _, c := range t.Offerings {
			if c.CapacityType.Or() == ct.Or() && (zone == "" || c.Zone == zone) && c.Available {
				soldOut = false
			}
		}
		if soldOut {
			return errclass.New(errclass.InsufficientCapacity, f.cfg.Provider, op,
				fmt.Errorf("insufficient capacity: the catalog has no available %s offering", o.Key(size)))
		}
	}
	return nil
}

// offeringProblem refuses a group the catalog cannot sell: spot of a size
// with no spot offering, or a zone the size is not offered in.
func (f *Fleet) offeringProblem(spec connectors.NodeGroupSpec) error {
	t, ok := f.catalog[spec.Size]
	if !ok {
		return nil
	}
	ct := spec.CapacityType.Or()
	for _, o := range t.OfferingsOrDefault() {
		if o.CapacityType.Or() == ct && (spec.Zone == "" || o.Zone == spec.Zone) {
			return nil
		}
	}
	if ct == types.CapacitySpot && !t.HasSpot() {
		return fmt.Errorf("spec.capacityType: size %s has no spot offering in this fleet's catalog", spec.Size)
	}
	return fmt.Errorf("spec.zone: size %s has no %s offering in zone %q", spec.Size, ct, spec.Zone)
}

// lostAnswer is the nasty fault: the request was applied, but the caller
// sees an error and will retry it with the same idempotency key.
func (f *Fleet) lostAnswer(op string) error {
	if f.faults.CreateSucceedsButErrorsRate > 0 && f.rng.Float64() < f.faults.CreateSucceedsButErrorsRate {
		return errclass.New(errclass.Retryable, f.cfg.Provider, op,
			errors.New("simulated timeout: the request was applied but its answer was lost"))
	}
	return nil
}

// MachineFault is what befalls one launched machine.
type MachineFault string

const (
	// NeverJoins: the machine runs but its Node never registers.
	NeverJoins MachineFault = "never-joins"
	// GoesNotReady: the node turns Ready, then NotReady for good.
	GoesNotReady MachineFault = "goes-not-ready"
	// TerminatedOutOfBand: the machine vanishes at the provider after it
	// turned Ready; its group launches a replacement.
	TerminatedOutOfBand MachineFault = "terminated"
	// Leaked: a launch also starts a machine tagged for the pool that no
	// group records.
	Leaked MachineFault = "leaked"
)

var machineFaults = []MachineFault{NeverJoins, GoesNotReady, TerminatedOutOfBand, Leaked}

// ForceFault makes the next n machine launches meet fault, whatever the
// rates say, so a test can stage each mode deterministically. Forced
// fates are not persisted.
func (f *Fleet) ForceFault(fault MachineFault, n int) error {
	if !slices.Contains(machineFaults, fault) {
		return fmt.Errorf("sim: unknown machine fault %q; known: %v", fault, machineFaults)
	}
	if n < 0 {
		return fmt.Errorf("sim: ForceFault %s: count %d is negative", fault, n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forced[fault] = n
	return nil
}

// takeForced consumes one forced occurrence of fault. Called with f.mu held.
func (f *Fleet) takeForced(fault MachineFault) bool {
	if f.forced[fault] > 0 {
		f.forced[fault]--
		return true
	}
	return false
}

// machineFate draws what befalls a machine being launched: one draw over
// the three fates, so their rates add up as configured. Called with f.mu held.
func (f *Fleet) machineFate() MachineFault {
	for _, fault := range []MachineFault{NeverJoins, GoesNotReady, TerminatedOutOfBand} {
		if f.takeForced(fault) {
			return fault
		}
	}
	nj, nr, term := f.faults.NeverJoinsRate, f.faults.GoesNotReadyRate, f.faults.TerminatedRate
	if nj+nr+term == 0 {
		return ""
	}
	switch r := f.rng.Float64(); {
	case r < nj:
		return NeverJoins
	case r < nj+nr:
		return GoesNotReady
	case r < nj+nr+term:
		return TerminatedOutOfBand
	}
	return ""
}

// leaksOnLaunch draws whether a launch also leaks a machine. Called with f.mu held.
func (f *Fleet) leaksOnLaunch() bool {
	if f.takeForced(Leaked) {
		return true
	}
	return f.faults.LeakRate > 0 && f.rng.Float64() < f.faults.LeakRate
}

// faultDue reports whether a Ready machine's delayed fault fires now.
func (f *Fleet) faultDue(m *machine, now time.Time) bool {
	return m.Ready && !now.Before(m.ReadyAt.Add(f.faults.FaultAfter))
}
