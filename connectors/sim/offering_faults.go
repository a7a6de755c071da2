package sim

import (
	"errors"
	"slices"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// offeringFault refuses to launch machines of a size bought one way that
// is listed as exhausted ("sim-4c8g/spot" in
// FaultConfig.InsufficientCapacityOfferings), as a cloud runs out of spot
// capacity of one type while on-demand is still sold. The error names the
// offering, so a pool can tell which one to mark unavailable. Called with
// f.mu held.
func (f *Fleet) offeringFault(op, size string, capacity types.CapacityType) error {
	if err := f.capacityFault(op, size); err != nil {
		return err
	}
	offering := size + "/" + string(capacity.Or())
	if slices.Contains(f.faults.InsufficientCapacityOfferings, offering) {
		return errclass.New(errclass.InsufficientCapacity, f.cfg.Provider, op,
			errors.New("simulated insufficient capacity for offering "+offering))
	}
	return nil
}
