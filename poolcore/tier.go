package poolcore

import (
	"time"

	"github.com/hanzoai/visor-fleet/contract"
)

// TierStatus is the tier part of the status query (no workflow calls: a
// query may not make any).
func (s *State) TierStatus(st *contract.PoolStatus) {
	t := s.Tiers
	st.Tier = t.Current()
	if n := len(t.Changes); n > 0 {
		st.TierSince = t.Changes[n-1].From
	}
}

// HourNodeHours is the node-hours per size the pool ran in the hour.
func (s *State) HourNodeHours(hour time.Time) map[string]float64 {
	return s.Machines.NodeHours(hour)
}
