package sim

import (
	"errors"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// offeringFault refuses to launch machines of a size bought one way that
// is listed as exhausted ("sim-4c8g/spot" in
// FaultConfig.InsufficientCapacityOfferings), as a cloud runs out of spot
// capacity of one type while on-demand is still sold. The error names the
// offering, so a pool can tell which one to mark unavailable. Called with
// f.mu held.
func (f *Fleet) offeringFault(op string, pool types.PoolKey, size string, capacity types.CapacityType) error {
	err := f.capacityFault(op, size)
	offering := size + "/" + string(capacity.Or())
	if err == nil && slices.Contains(f.faults.InsufficientCapacityOfferings, offering) {
		err = errclass.New(errclass.InsufficientCapacity, f.cfg.Provider, op,
			errors.New("simulated insufficient capacity for offering "+offering))
	}
	if err != nil {
		f.noteRefusal(CapacityRefusal{Pool: pool, Size: size, CapacityType: capacity.Or(), At: f.cfg.Clock()})
	}
	return err
}

// maxRefusals bounds the sim's record of capacity refusals.
const maxRefusals = 2000

// CapacityRefusal is one launch the sim refused for want of capacity: the
// truth a chaos check reads to see whether a pool kept asking for an
// offering it had been told was exhausted.
type CapacityRefusal struct {
	Pool         types.PoolKey      `json:"pool"`
	Size         string             `json:"size"`
	CapacityType types.CapacityType `json:"capacityType"`
	At           time.Time          `json:"at"`
}

// Offering names the refused offering as the faults section does.
func (r CapacityRefusal) Offering() string { return r.Size + "/" + string(r.CapacityType) }

func (f *Fleet) noteRefusal(r CapacityRefusal) {
	f.st.Refusals = append(f.st.Refusals, r)
	if over := len(f.st.Refusals) - maxRefusals; over > 0 {
		f.st.Refusals = append([]CapacityRefusal(nil), f.st.Refusals[over:]...)
	}
	f.touch()
}
