package poolcore

import (
	"time"

	"github.com/hanzoai/visor-fleet/law"
)

// MaxGroupTemplates bounds the groups whose template a pool records: far
// more than any pool's offerings times the templates it rolls through.
const MaxGroupTemplates = 256

// lifecycleInput stamps the groups the pool has not seen before with the
// current template (a group of the provider's reading predating the rule
// is taken as current: nothing says otherwise), forgets groups that are
// gone, and gives the law the templates and the due clocks, and the
// nodes due now.
func (s *State) lifecycleInput(now time.Time, rules Rules) (*law.Lifecycle, []law.Due) {
	if !rules.Lifecycle {
		return nil, nil
	}
	current := s.Policy.TemplateHash()
	if s.GroupTemplates == nil {
		s.GroupTemplates = map[string]string{}
	}
	lc := &law.Lifecycle{Template: current, Groups: map[string]law.GroupTemplate{}}
	if v := s.Provider; v != nil {
		seen := map[string]bool{}
		for _, g := range v.Groups {
			seen[g.ID] = true
			if _, ok := s.GroupTemplates[g.ID]; !ok && len(s.GroupTemplates) < MaxGroupTemplates {
				s.GroupTemplates[g.ID] = current
			}
			lc.Groups[g.ID] = law.GroupTemplate{Template: s.GroupTemplates[g.ID], CapacityType: g.CapacityType, Zone: g.Zone}
		}
		for id := range s.GroupTemplates {
			if !seen[id] {
				delete(s.GroupTemplates, id)
			}
		}
	}
	due := law.DueNodes(s.Policy, lc, s.Observation, s.LawMachines(), now)
	s.DueSince = law.UpdateDueSince(s.DueSince, due, now)
	lc.DueSince = s.DueSince
	return lc, due
}
