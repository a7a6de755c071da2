package sizing

import (
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// reserve returns req.Existing with the room the promised pods take: they
// are placed first, by the same rules as any pod, on existing nodes only,
// and what they land on is no longer free. Promised pods that fit nowhere
// take nothing (their nodes are gone or never were theirs). ruled names
// the nodes a promised pod with pod-to-pod rules (anti-affinity, spread,
// host ports) lands on: sizing knows the room it takes there, not whom it
// repels, so no pod with such rules of its own is placed beside it.
func reserve(req Request, excluded []string) (nodes []types.NodeObservation, ruled map[string]bool) {
	pre := plan(Request{Pending: req.Promised, Existing: req.Existing, Catalog: req.Catalog, Template: req.Template, MaxNewNodes: -1}, excluded)
	pods := make(map[string]types.PendingPod, len(req.Promised))
	for _, p := range req.Promised {
		pods[p.Key()] = p
	}
	taken := map[string]types.Resources{}
	for _, pl := range pre.Placements {
		name, ok := strings.CutPrefix(pl.Node, ExistingNodePrefix)
		if !ok {
			continue
		}
		pod := pods[pl.Pod]
		if hasPodRules(pod) {
			if ruled == nil {
				ruled = map[string]bool{}
			}
			ruled[name] = true
		}
		n := max(pl.Count, 1)
		r := taken[name]
		for range n {
			r = r.Add(podRequests(pod))
		}
		taken[name] = r
	}
	out := make([]types.NodeObservation, len(req.Existing))
	for i, n := range req.Existing {
		if r, ok := taken[n.Name]; ok {
			n.Requested = n.Requested.Add(r)
		}
		out[i] = n
	}
	return out, ruled
}

// hasPodRules says whether a pod's placement depends on the pods beside it.
func hasPodRules(p types.PendingPod) bool {
	s := p.Scheduling
	return s != nil && (len(s.AntiAffinity) > 0 || len(s.TopologySpread) > 0 || len(s.HostPorts) > 0)
}

// podRequests is what one pod takes on a node: its requests and a slot.
func podRequests(p types.PendingPod) types.Resources {
	r := p.Requests
	r.Pods = max(r.Pods, 1)
	return r
}
