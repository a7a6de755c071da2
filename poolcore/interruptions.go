package poolcore

import (
	"fmt"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// maxNoticesKept bounds the notice IDs the pool remembers having acted on.
const maxNoticesKept = 200

// NoticeMemory is how long after its deadline a notice's ID is kept: a
// provider that lists it again within that time is acknowledged, not
// acted on twice.
const NoticeMemory = time.Hour

// HasSpot reports whether the provider's view shows spot machines (or a
// spot group asked to have some).
func (s *State) HasSpot() bool {
	if s.Provider == nil {
		return false
	}
	for _, g := range s.Provider.Groups {
		if g.CapacityType == types.CapacitySpot && (g.Target > 0 || len(g.Instances) > 0) {
			return true
		}
	}
	return false
}

func MachineName(n connectors.Interruption) string {
	switch {
	case n.NodeName != "" && n.InstanceID != "":
		return fmt.Sprintf("node %s (%s)", n.NodeName, n.InstanceID)
	case n.NodeName != "":
		return "node " + n.NodeName
	}
	return "machine " + n.InstanceID
}

// forgetNotices drops notice IDs past their memory, then the oldest
// beyond maxNoticesKept.
func (s *State) ForgetNoticesAt(now time.Time) {
	for id, until := range s.Notices {
		if now.After(until) {
			delete(s.Notices, id)
		}
	}
	if over := len(s.Notices) - maxNoticesKept; over > 0 {
		ids := sortedKeys(s.Notices)
		sort.SliceStable(ids, func(i, j int) bool { return s.Notices[ids[i]].Before(s.Notices[ids[j]]) })
		for _, id := range ids[:over] {
			delete(s.Notices, id)
		}
	}
}

func (s *State) NoticePollEvery() time.Duration {
	return min(NoticePoll, max(s.Policy.SampleInterval.D(), time.Second))
}

// InterruptedMachine finds the noticed machine in the provider's view.
func (s *State) InterruptedMachine(n connectors.Interruption) (law.MachineAction, bool) {
	if v := s.Provider; v != nil {
		for _, g := range v.Groups {
			for _, inst := range g.Instances {
				if (n.InstanceID != "" && inst.ID == n.InstanceID) || (n.NodeName != "" && inst.Name == n.NodeName) {
					name := inst.Name
					if name == "" {
						name = inst.ID
					}
					return law.MachineAction{Name: name, GroupID: g.ID, Size: g.Size, Reason: "spot interruption"}, true
				}
			}
		}
	}
	return law.MachineAction{}, false
}

func (s *State) IsNode(name string) bool {
	if s.Observation == nil {
		return false
	}
	for _, n := range s.Observation.Nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

// NoticePoll is the longest a pool with spot machines goes between two
// reads of its notices.
const NoticePoll = 20 * time.Second
