package sim

import (
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// offeringFault is capacityFault (a sold-out size, or an offering sold out
// in FaultConfig.SoldOutOfferings or the catalog), recording each refusal
// for the chaos checks. Called with f.mu held.
func (f *Fleet) offeringFault(op string, pool types.PoolKey, size, zone string, capacity types.CapacityType) error {
	err := f.capacityFault(op, size, zone, capacity)
	if err != nil {
		f.noteRefusal(CapacityRefusal{Pool: pool, Size: size, Zone: zone, CapacityType: capacity.Or(), At: f.cfg.Clock()})
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
	Zone         string             `json:"zone,omitempty"`
	CapacityType types.CapacityType `json:"capacityType"`
	At           time.Time          `json:"at"`
}

// Offering names the refused offering as the faults section does
// (types.Offering.Key).
func (r CapacityRefusal) Offering() string {
	return types.Offering{Zone: r.Zone, CapacityType: r.CapacityType}.Key(r.Size)
}

func (f *Fleet) noteRefusal(r CapacityRefusal) {
	f.st.Refusals = append(f.st.Refusals, r)
	if over := len(f.st.Refusals) - maxRefusals; over > 0 {
		f.st.Refusals = append([]CapacityRefusal(nil), f.st.Refusals[over:]...)
	}
	f.touch()
}
