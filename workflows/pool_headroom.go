package workflows

import (
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// withHeadroom tells the law which headroom pods (the policy's and the
// observed CapacityBuffers') the pool has no room for now, and lets
// scale-down check that removing nodes keeps the room. The check runs the
// planner's scheduling rules over the Ready and booting nodes; it is pure,
// so it may run in workflow code.
func (p *pool) withHeadroom(in *law.DecisionInput, now time.Time) {
	s, key := p.state, p.spec.Key
	nodes := p.headroomNodes(now)
	tmpl := sizing.TemplateOptions{Labels: s.Policy.NodeLabels, Taints: s.Policy.NodeTaints, Region: s.Gate.Region, PoolLabels: key.NodeLabels()}
	pods := law.HeadroomPods(s.Policy, key)
	if s.Observation != nil {
		// Empty unless runRules.Buffers: fold drops them otherwise.
		pods = append(pods, law.BufferPods(s.Observation.Buffers, key)...)
	}
	for _, pod := range law.ShortfallOf(pods, nodes, nil, tmpl) {
		if _, never := s.Unplaceable[pod.Key()]; !never {
			in.HeadroomShort = append(in.HeadroomShort, pod)
		}
	}
	in.KeepsHeadroom = func(remove []string) (bool, string) {
		return law.KeepsRoomFor(pods, nodes, remove, nil, tmpl)
	}
}

// buffered reports whether the last observation carries a CapacityBuffer
// that keeps room (fold keeps buffers only under runRules.Buffers).
func (s *PoolState) buffered() bool {
	if s.Observation == nil {
		return false
	}
	for _, b := range s.Observation.Buffers {
		if b.Pods > 0 {
			return true
		}
	}
	return false
}

// withBuffers adds the observed CapacityBuffers to the capacity summary:
// the pods they keep room for, and each one's error (a bad buffer adds
// nothing and says why here and in the buffer's own status).
func withBuffers(summary string, obs *types.PoolObservation) string {
	if obs == nil || len(obs.Buffers) == 0 {
		return summary
	}
	pods := 0
	var bad []string
	for _, b := range obs.Buffers {
		pods += b.Pods
		if b.Error != "" {
			bad = append(bad, fmt.Sprintf("buffer %s: %s", b.Key(), b.Error))
		}
	}
	parts := []string{fmt.Sprintf("buffers %d pods (%d CapacityBuffers)", pods, len(obs.Buffers))}
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more with errors", len(bad)-3))
	}
	parts = append(parts, bad...)
	if summary != "" {
		parts = append([]string{summary}, parts...)
	}
	return strings.Join(parts, "; ")
}
