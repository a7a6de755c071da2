package activities

import "github.com/hanzoai/visor-fleet/types"

// withCatalogRoom gives machines the pool asked for but that have not
// registered yet (they come with a name and a size only) the allocatable
// room of their size, so the planner counts them as booting room and one
// pod never buys two nodes however slowly machines boot.
func withCatalogRoom(nodes []types.NodeObservation, catalog []types.InstanceType) []types.NodeObservation {
	bySize := make(map[string]types.InstanceType, len(catalog))
	for _, t := range catalog {
		if _, ok := bySize[t.Name]; !ok {
			bySize[t.Name] = t
		}
	}
	out := make([]types.NodeObservation, 0, len(nodes))
	for _, n := range nodes {
		if n.Allocatable == (types.Resources{}) {
			t, ok := bySize[n.Size]
			if !ok {
				continue // a size the catalog no longer has gives no room we can vouch for
			}
			n.Allocatable = t.Allocatable()
		}
		out = append(out, n)
	}
	return out
}

// withDaemonOverhead adds what DaemonSet pods take on every node to each
// size's overhead: a new node runs them before any pending pod.
func withDaemonOverhead(catalog []types.InstanceType, daemons types.Resources) []types.InstanceType {
	if daemons == (types.Resources{}) || daemons.IsNegative() {
		return catalog
	}
	out := make([]types.InstanceType, len(catalog))
	for i, t := range catalog {
		t.Overhead = t.Overhead.Add(daemons)
		out[i] = t
	}
	return out
}
