package law

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// machineHealth finds machines that never became Ready nodes within the
// provision timeout and nodes NotReady past the unready timeout. When more
// than the policy's fraction of the pool is unready at once it returns why
// instead: a mass failure (a zone, the network, the control plane) is not
// fixed by deleting nodes, so repair and scale-down freeze.
func machineHealth(in DecisionInput, wake func(time.Time, string)) (Decision, string) {
	p := in.Policy
	d := Decision{Action: ActionRepair}
	provision, unready := p.EffectiveProvisionTimeout(), p.EffectiveUnreadyTimeout()
	total, unhealthy := 0, 0
	for _, m := range in.Machines {
		if m.Node == types.NodeDeleting {
			continue
		}
		total++
		switch {
		case m.Node == types.NodeReady || m.Node == types.NodeCordoned:
			continue
		case !in.NotReadySince[m.Name].IsZero():
			since := in.NotReadySince[m.Name]
			unhealthy++
			if due := since.Add(unready); in.Now.Before(due) {
				wake(due, "unready timeout "+m.Name)
				continue
			}
			d.Replace = append(d.Replace, MachineAction{Name: m.Name, Size: m.Size, GroupID: m.GroupID,
				Reason: fmt.Sprintf("node %s NotReady since %s, longer than unreadyTimeout %s", m.Name, since.UTC().Format(time.RFC3339), unready)})
		case !m.CreatedAt.IsZero():
			due := m.CreatedAt.Add(provision)
			if in.Now.Before(due) {
				wake(due, "provision timeout "+m.Name)
				continue
			}
			unhealthy++
			what := "never registered as a node"
			if m.Node != "" {
				what = "registered but never became Ready"
			}
			d.Expire = append(d.Expire, MachineAction{Name: m.Name, Size: m.Size, GroupID: m.GroupID,
				Reason: fmt.Sprintf("machine %s (%s) %s within provisionTimeout %s of its launch at %s", m.Name, m.Size, what, provision, m.CreatedAt.UTC().Format(time.RFC3339))})
		}
	}
	for _, m := range in.Leaked {
		// A leak younger than the provision timeout may still be a launch
		// in flight that the provider has not filed under its group yet.
		if due := m.CreatedAt.Add(provision); !m.CreatedAt.IsZero() && in.Now.Before(due) {
			wake(due, "leaked machine "+m.ID)
			continue
		}
		d.Collect = append(d.Collect, MachineAction{ID: m.ID, Name: m.Name, Reason: fmt.Sprintf("machine %s carries the pool's identity but belongs to none of its groups", m.ID)})
	}
	if total > 0 && unhealthy > 0 && float64(unhealthy) > p.EffectiveMaxUnreadyFraction()*float64(total) && unhealthy > 1 {
		return Decision{}, fmt.Sprintf("%d of %d nodes are unready (more than %.0f%%): replacement and scale-down frozen, a mass failure is not fixed by deleting nodes",
			unhealthy, total, p.EffectiveMaxUnreadyFraction()*100)
	}
	if n := len(d.Expire) + len(d.Replace) + len(d.Collect); n > 0 {
		// Each machine's own reason, so the decision says why, not only how many.
		var why []string
		for _, m := range slices.Concat(d.Expire, d.Replace, d.Collect) {
			why = append(why, m.Reason)
		}
		d.Reason = fmt.Sprintf("%s to repair: %s", Plural(n, "machine"), strings.Join(why, "; "))
	}
	return d, ""
}

// anyDeferred reports whether an overdue pod was left out of the last
// scale-up only because it grew another size.
func anyDeferred(in DecisionInput, pods []types.PendingPod) bool {
	for _, pod := range pods {
		if in.Deferred[pod.Key()] {
			return true
		}
	}
	return false
}

// fitsElsewhere keeps, in order, up to limit idle nodes whose pods the
// rest of the pool can take: their requests fit the free room of the ready
// nodes that stay, and their largest pod fits on one of them. Nodes that
// fail are skipped with the reason, so one stuck node never starves the
// other idle ones.
func fitsElsewhere(obs *types.PoolObservation, idle []string, limit int, d *Decision) []string {
	removing := map[string]bool{}
	var out []string
	for _, name := range idle {
		if len(out) == limit {
			break
		}
		var load, largest types.Resources
		for _, n := range obs.Nodes {
			if n.Name == name {
				load, largest = n.Requested, n.LargestPod
			}
		}
		var room types.Resources
		holdsLargest := largest == (types.Resources{})
		for _, n := range obs.Nodes {
			if n.Name == name || removing[n.Name] || n.State != types.NodeReady {
				continue
			}
			free := n.FreeRoom()
			room = room.Add(free)
			if !holdsLargest && withSlot(largest).Fits(withSlots(free, n)) {
				holdsLargest = true
			}
		}
		need := types.Resources{MilliCPU: load.MilliCPU, Memory: load.Memory, GPUs: load.GPUs, EphemeralStorage: load.EphemeralStorage}
		room.Pods = need.Pods
		switch {
		case !need.Fits(room):
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: its pods (%s) do not fit in the free room of the nodes that stay", name, need))
		case !holdsLargest:
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: its largest pod (%s) fits on no other node", name, largest))
		default:
			removing[name] = true
			out = append(out, name)
		}
	}
	return out
}

// packIdle is fitsElsewhere as a packing (Rules.PackIdle): an idle node
// goes only when its pods surely fit on the Ready nodes that stay and
// admit them (packInto: each pod as large as its largest, first fit,
// pod slots counted, no node both giving and taking). A node without GPUs
// gives its pods only to nodes without GPUs, as sizing keeps such pods
// off GPU nodes; an idle GPU node (no GPU in use) to any node. Labels and
// taints must agree as for consolidation (sameLabelsAndTaints), but for
// the zone (withoutZone). A node whose largest pod is not reported counts
// as one pod of all it requests.
func packIdle(in DecisionInput, idle []string, limit int, d *Decision) []string {
	obs := in.Observation
	var cands []types.NodeObservation
	for _, name := range idle {
		n, _ := nodeNamed(obs, name)
		if n.LargestPod == (types.Resources{}) && n.Requested.Pods <= 0 {
			n.LargestPod, n.Requested.Pods = n.Requested, 1
		} else if n.LargestPod == (types.Resources{}) {
			n.LargestPod = n.Requested
		}
		cands = append(cands, n)
	}
	admits := func(c, n types.NodeObservation) bool {
		if c.Allocatable.GPUs == 0 && n.Allocatable.GPUs > 0 {
			return false
		}
		return sameLabelsAndTaints(withoutZone(c), n, in.Rules.KeepReplacement)
	}
	where := func(types.NodeObservation) string { return "the nodes that stay and admit them" }
	var lands func(c, n types.NodeObservation) bool
	if in.Rules.PackAnyOrder && in.Rules.KeepReplacement {
		lands = admits
	}
	return packInto(obs, cands, limit, admits, lands, where, "removed", d)
}

// withoutZone is a node as the idle rule compares it: its zone and region
// passed over. The idle rule emptied nodes into any zone before packing,
// and a pool spread over zones has no two nodes of one zone's labels
// otherwise: its idle nodes would never go. A pod pinned to its zone that
// finds no room there stays pending, and the pool buys in that zone.
func withoutZone(n types.NodeObservation) types.NodeObservation {
	if n.Labels == nil {
		return n
	}
	labels := make(map[string]string, len(n.Labels))
	for k, v := range n.Labels {
		if !slices.Contains(zoneLabels, k) {
			labels[k] = v
		}
	}
	n.Labels = labels
	return n
}

// zoneLabels name a node's zone and region.
var zoneLabels = []string{
	"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
	"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
}

// withSlot asks for one pod slot; withSlots treats a node that reports no
// slots as unlimited.
func withSlot(r types.Resources) types.Resources { r.Pods = 1; return r }

func withSlots(free types.Resources, n types.NodeObservation) types.Resources {
	if n.Allocatable.Pods == 0 {
		free.Pods = 1
	}
	return free
}

// HasRoomFor says whether node n has free room for one pod asking req.
func HasRoomFor(n types.NodeObservation, req types.Resources) bool {
	return withSlot(req).Fits(withSlots(n.FreeRoom(), n))
}

// Plural writes "1 node", "3 nodes", as the law's reasons count.
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// draining counts the nodes being emptied or removed now.
func draining(in DecisionInput) int {
	n := 0
	for _, node := range in.Observation.Nodes {
		if _, done := in.Removed[node.Name]; done && in.Rules.BudgetPaces {
			// Drained and deleted at the provider: its drain is over,
			// whatever its Node object still says.
			continue
		}
		if node.State == types.NodeCordoned || node.State == types.NodeDeleting {
			n++
		}
	}
	return n
}

// keepHeadroom drops, from the end, nodes whose removal would take the
// room the pool keeps for its headroom.
func keepHeadroom(remove []string, keeps func([]string) (bool, string), d *Decision) []string {
	for len(remove) > 0 {
		ok, why := keeps(remove)
		if ok {
			return remove
		}
		d.Skipped = append(d.Skipped, fmt.Sprintf("%s: kept for headroom (%s)", remove[len(remove)-1], why))
		remove = remove[:len(remove)-1]
	}
	return remove
}
