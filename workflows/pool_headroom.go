package workflows

import (
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
)

// withHeadroom tells the law which headroom pods (the policy's and the
// observed CapacityBuffers') the pool has no room for now, and lets
// scale-down check that removing nodes keeps the room. The check runs the
// planner's scheduling rules over the Ready and booting nodes; it is pure,
// so it may run in workflow code.
func (p *pool) withHeadroom(in *law.DecisionInput, now time.Time) {
	s, key := p.state, p.spec.Key
	nodes := p.state.HeadroomNodes(now)
	tmpl := sizing.TemplateOptions{Labels: s.Policy.NodeLabels, Taints: s.Policy.NodeTaints, Region: s.Gate.Region, PoolLabels: key.NodeLabels()}
	pods := law.HeadroomPods(s.Policy, key)
	if s.Observation != nil {
		// Empty unless poolcore.Rules.Buffers: fold drops them otherwise.
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
