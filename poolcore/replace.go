package poolcore

import (
	"fmt"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
	corev1 "k8s.io/api/core/v1"
)

// OfferingOfNode is the offering (zone, capacity type) of the group the
// named node's machine belongs to, as the provider last reported it: ""
// and on-demand when the group is not pinned or the machine not found. A
// node's zone label alone is not enough: a provider whose groups are not
// bought zone by zone labels its nodes with a zone all the same.
func (s *State) OfferingOfNode(name string) (string, types.CapacityType) {
	if s.Provider == nil {
		return "", ""
	}
	for _, g := range s.Provider.Groups {
		for _, inst := range g.Instances {
			if inst.Name == name {
				return g.Zone, g.CapacityType
			}
		}
	}
	return "", ""
}

// ZoneOfNode is the zone label of the named node ("" if none or gone).
func (s *State) ZoneOfNode(name string) string {
	if s.Observation == nil {
		return ""
	}
	for _, n := range s.Observation.Nodes {
		if n.Name == name {
			return n.Labels[corev1.LabelTopologyZone]
		}
	}
	return ""
}

// noteReplacementNode names the replacement's new node once an
// observation shows it (law.Rules.KeepReplacement): from then on it is
// that node the replacement waits for, and its going abandons it.
func (s *State) noteReplacementNode(obs *types.PoolObservation, rules law.Rules) {
	r := s.Replacing
	if r == nil || r.Node != "" || !rules.KeepReplacement {
		return
	}
	if name := law.NewReplacementNode(obs, r); name != "" {
		named := *r
		named.Node = name
		s.Replacing = &named
	}
}

// LapseReplacement drops the replacement under way once it is no longer
// live, or once a removal took one of its old nodes (the replacement's
// own drain, or another rule's). With law.Rules.KeepReplacement a
// replacement dropped as no longer live is recorded as abandoned, with
// why; one whose old nodes a removal took is simply over.
func (s *State) LapseReplacement(now time.Time, removed []string, rules Rules) {
	r := s.Replacing
	if r == nil {
		return
	}
	if slices.ContainsFunc(removed, func(n string) bool { return slices.Contains(r.Old, n) }) {
		s.Replacing = nil
		return
	}
	live, why := law.ReplacementVerdict(s.Policy, r, s.Observation, now)
	if live {
		return
	}
	s.Replacing = nil
	if rules.KeepReplacement && why != "" {
		outcome := "nothing drained; the pool goes on"
		if r.Node != "" {
			outcome += fmt.Sprintf(" and %s is ordinary capacity", r.Node)
		}
		s.Record(contract.DecisionRecord{Seq: s.NextSeq(), At: now, Action: actionReplaceAbandoned, Reason: why, Outcome: outcome})
	}
}

// actionReplaceAbandoned is the decision recorded when a replacement is
// dropped before it completed.
const actionReplaceAbandoned = "replace-abandoned"
