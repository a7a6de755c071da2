package workflows

import (
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
)

// withHeadroom tells the law which headroom pods the pool has no room for
// now, and lets scale-down check that removing nodes keeps the room. The
// check runs the planner's scheduling rules over the Ready and booting
// nodes; it is pure, so it may run in workflow code.
func (p *pool) withHeadroom(in *law.DecisionInput, now time.Time) {
	s, key := p.state, p.spec.Key
	nodes := p.headroomNodes(now)
	tmpl := sizing.TemplateOptions{Labels: s.Policy.NodeLabels, Taints: s.Policy.NodeTaints, Region: s.Gate.Region, PoolLabels: key.NodeLabels()}
	for _, pod := range law.HeadroomShortfall(s.Policy, key, nodes, nil, tmpl) {
		if _, never := s.Unplaceable[pod.Key()]; !never {
			in.HeadroomShort = append(in.HeadroomShort, pod)
		}
	}
	in.KeepsHeadroom = func(remove []string) (bool, string) {
		return law.KeepsHeadroom(s.Policy, key, nodes, remove, nil, tmpl)
	}
}
