package poolcore

import "github.com/hanzoai/visor-fleet/types"

// notReadyFromCondition moves each NotReady clock trackNodes keeps back to
// when the node's Ready condition changed (law.Rules.NotReadyClock): the
// node has been NotReady since then, not since the pool looked. The clock
// never starts before the pool saw the node Ready (a node that never was
// is the provision timeout's) nor after the observation.
func (s *State) notReadyFromCondition(obs types.PoolObservation) {
	for _, n := range obs.Nodes {
		since, ok := s.NotReadySince[n.Name]
		at := n.ReadyChangedAt
		if !ok || n.State != types.NodeNotReady || at.IsZero() || !at.Before(since) {
			continue
		}
		if seen := s.SeenReady[n.Name]; at.Before(seen) {
			at = seen
		}
		s.NotReadySince[n.Name] = at
	}
}
