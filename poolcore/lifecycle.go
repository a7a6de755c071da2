package poolcore

import (
	"slices"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
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

// DriftedGroups are the groups created under another template than the
// policy's, sorted: no scale-up grows them.
func (s *State) DriftedGroups(rules Rules) []string {
	if !rules.Lifecycle {
		return nil
	}
	current := s.Policy.TemplateHash()
	var out []string
	for id, h := range s.GroupTemplates {
		if h != current {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// GroupSuffix names a group the pool creates under the current template
// apart from a drifted group of the same offering, which holds the plain
// name; "" when there is none (the plain name is free or current).
func (s *State) GroupSuffix(rules Rules, size string, ct types.CapacityType, zone string) string {
	if !rules.Lifecycle || s.Provider == nil {
		return ""
	}
	drifted := s.DriftedGroups(rules)
	for _, g := range s.Provider.Groups {
		if g.Size == size && g.CapacityType.Or() == ct.Or() && g.Zone == zone && slices.Contains(drifted, g.ID) {
			return "-t" + s.Policy.TemplateHash()[:GroupSuffixLen]
		}
	}
	return ""
}

// StampGroup records the template a group was created or grown under.
// Only a group this call created takes it: an existing group keeps the
// template it was created with, whatever the input says.
func (s *State) StampGroup(rules Rules, groupID string, created bool, labels map[string]string, taints []types.Taint) {
	if !rules.Lifecycle || groupID == "" || !created {
		return
	}
	if s.GroupTemplates == nil {
		s.GroupTemplates = map[string]string{}
	}
	if len(s.GroupTemplates) < MaxGroupTemplates {
		s.GroupTemplates[groupID] = types.Policy{NodeLabels: labels, NodeTaints: taints}.TemplateHash()
	}
}

// LifecycleStatus counts the nodes due, for the status query.
func (s *State) LifecycleStatus(st *contract.PoolStatus, due []law.Due, rules Rules) {
	for _, d := range due {
		if d.Drifted {
			st.Drifted++
		}
		if d.Expired {
			st.Expired++
		}
		if len(st.Due) < maxDueListed {
			line := d.Node + ": " + d.Reason
			if n, ok := s.ObservedNode(d.Node); ok && rules.RenewalTolerations {
				if why := law.Untolerated(s.Policy, n); why != "" {
					line += "; kept: " + why
				}
			}
			st.Due = append(st.Due, line)
		}
	}
}

// ObservedNode is the held observation's node of that name.
func (s *State) ObservedNode(name string) (types.NodeObservation, bool) {
	if s.Observation == nil {
		return types.NodeObservation{}, false
	}
	for _, n := range s.Observation.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return types.NodeObservation{}, false
}

// GroupSuffixLen is how much of the template hash ends a new group's name.
const GroupSuffixLen = 8

// maxDueListed bounds the nodes the status lists with why.
const maxDueListed = 20
