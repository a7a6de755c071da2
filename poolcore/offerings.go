package poolcore

import (
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// OfferingUnavailableFor is how long an offering that ran out of capacity
// is not bought again: Karpenter's 3 minutes, long enough not to buy into
// the same shortage on the next decision, short enough that spot comes
// back soon after the provider has it again.
const OfferingUnavailableFor = 3 * time.Minute

// maxUnavailableOfferings bounds the marks a pool keeps, so a provider out
// of everything cannot grow its state without bound.
const maxUnavailableOfferings = 64

// UnavailableOfferings forgets marks that expired and returns the rest.
func (s *State) UnavailableOfferings(now time.Time) map[string]time.Time {
	for k, until := range s.UnavailableOffering {
		if !now.Before(until) {
			delete(s.UnavailableOffering, k)
		}
	}
	if len(s.UnavailableOffering) == 0 {
		s.UnavailableOffering = nil
		return nil
	}
	out := make(map[string]time.Time, len(s.UnavailableOffering))
	for k, v := range s.UnavailableOffering {
		out[k] = v
	}
	return out
}

// UnavailableCount is how many offerings are marked unavailable at now.
func (s *State) UnavailableCount(now time.Time) int {
	n := 0
	for _, until := range s.UnavailableOffering {
		if now.Before(until) {
			n++
		}
	}
	return n
}

// MarkUnavailable remembers that offering key ran out until until; past
// the bound the mark ending soonest goes (then by key, deterministically).
func (s *State) MarkUnavailable(key string, until time.Time) {
	if s.UnavailableOffering == nil {
		s.UnavailableOffering = map[string]time.Time{}
	}
	s.UnavailableOffering[key] = until
	for len(s.UnavailableOffering) > maxUnavailableOfferings {
		keys := make([]string, 0, len(s.UnavailableOffering))
		for k := range s.UnavailableOffering {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := s.UnavailableOffering[keys[i]], s.UnavailableOffering[keys[j]]
			if !a.Equal(b) {
				return a.Before(b)
			}
			return keys[i] < keys[j]
		})
		delete(s.UnavailableOffering, keys[0])
	}
}

// OfferingMachines counts the pool's machines by activities.MachineKey,
// so spend prices a spot group at the spot price.
func (s *State) OfferingMachines() map[string]int {
	if s.Provider == nil {
		return nil
	}
	out := map[string]int{}
	for _, g := range s.Provider.Groups {
		out[types.MachineKey(g.Size, g.CapacityType, g.Zone)] += g.Target
	}
	return out
}
