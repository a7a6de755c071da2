package main

import (
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// Invariants over the provider's side: groups, machines and nodes.

func checkDuplicateGroups(t truth) result {
	r := result{Name: "no duplicate node group"}
	for _, c := range t.clusterIDs() {
		bySize, byName := map[string][]string{}, map[string][]string{}
		for _, g := range t.Sims[c].Inventory.Groups {
			r.Checked++
			// One group per offering and node template: a drift creates
			// a group of the new template beside the old one's.
			k := g.Pool.WorkflowID() + " size " + g.Group.Size
			if ct := g.Group.CapacityType; ct != "" {
				k += " " + string(ct)
			}
			if g.Group.Zone != "" {
				k += " in " + g.Group.Zone
			}
			if labels := templateLabels(g.Group.Labels, g.Pool); labels != "" {
				k += " labelled " + labels
			}
			bySize[k] = append(bySize[k], g.Group.ID)
			byName[g.Group.Name] = append(byName[g.Group.Name], g.Group.ID)
		}
		for _, k := range slices.Sorted(maps.Keys(bySize)) {
			if ids := bySize[k]; len(ids) > 1 {
				r.fail("%s: %s has %d groups: %s", c, k, len(ids), strings.Join(ids, ", "))
			}
		}
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			if ids := byName[n]; len(ids) > 1 {
				r.fail("%s: group name %s is used by %s", c, n, strings.Join(ids, ", "))
			}
		}
	}
	return r
}

// templateLabels are a group's labels other than the pool's identity,
// in key order: the node template they were created under.
func templateLabels(labels map[string]string, pool types.PoolKey) string {
	identity := pool.NodeLabels()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if _, own := identity[k]; !own {
			out = append(out, k+"="+labels[k])
		}
	}
	return strings.Join(out, ",")
}

func checkDuplicateMachines(t truth) result {
	r := result{Name: "no duplicate machine"}
	for _, c := range t.clusterIDs() {
		inv := t.Sims[c].Inventory
		byID, byName := map[string][]string{}, map[string][]string{}
		for _, g := range inv.Groups {
			for _, m := range g.Group.Instances {
				r.Checked++
				byID[m.ID] = append(byID[m.ID], "group "+g.Group.ID)
				byName[m.Name] = append(byName[m.Name], "group "+g.Group.ID)
			}
		}
		for _, l := range inv.Leaked {
			r.Checked++
			byID[l.Instance.ID] = append(byID[l.Instance.ID], "leaked")
		}
		for _, id := range slices.Sorted(maps.Keys(byID)) {
			if where := byID[id]; len(where) > 1 {
				r.fail("%s: machine %s appears %d times (%s)", c, id, len(where), strings.Join(where, ", "))
			}
		}
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			if where := byName[n]; len(where) > 1 {
				r.fail("%s: node name %s belongs to %d machines (%s)", c, n, len(where), strings.Join(where, ", "))
			}
		}
	}
	return r
}

func checkTargets(t truth) result {
	r := result{Name: "pool target = provider target"}
	for _, p := range t.Spec.Pools {
		r.Checked++
		id := p.Key.WorkflowID()
		st := t.Pools.Status[id].Status
		if st == nil {
			r.fail("%s: no status (%s)", id, t.Pools.Status[id].Err)
			continue
		}
		provider := 0
		for _, g := range t.poolGroups(p.Key) {
			provider += g.TargetSize
		}
		if st.TargetNodes != provider {
			r.fail("%s: pool says target %d, provider's groups total %d", id, st.TargetNodes, provider)
		}
	}
	return r
}

func checkOrphans(t truth) result {
	r := result{Name: "no orphaned machine"}
	known := map[types.PoolKey]bool{}
	for _, p := range t.Spec.Pools {
		known[p.Key] = true
	}
	for _, c := range t.clusterIDs() {
		s := t.Sims[c]
		machines := map[string]bool{}
		for _, g := range s.Inventory.Groups {
			for _, m := range g.Group.Instances {
				r.Checked++
				machines[m.Name] = true
			}
			if !known[g.Pool] {
				r.fail("%s: group %s (%d machines) belongs to %s, which is no pool of the spec", c, g.Group.ID, len(g.Group.Instances), g.Pool.WorkflowID())
			}
		}
		for _, l := range s.Inventory.Leaked {
			r.Checked++
			r.fail("%s: machine %s (%s, launched %s) is tagged for %s but in no group", c, l.Instance.ID, l.Size, l.Instance.CreatedAt.Format(time.RFC3339), l.Pool.WorkflowID())
		}
		for _, n := range s.Nodes {
			if !strings.HasPrefix(n.Spec.ProviderID, "sim://") {
				continue // not a machine of the cloud (none in the sim today)
			}
			r.Checked++
			if !machines[n.Name] {
				r.fail("%s: node %s (%s) has no machine in any group", c, n.Name, n.Spec.ProviderID)
			}
		}
	}
	return r
}

func checkBounds(t truth) result {
	r := result{Name: "node counts within [min, max]"}
	for _, p := range t.Spec.Pools {
		r.Checked++
		id, lo, hi := p.Key.WorkflowID(), p.Policy.MinNodes, p.Policy.MaxNodes
		target, machines := 0, 0
		for _, g := range t.poolGroups(p.Key) {
			target += g.TargetSize
			machines += len(g.Instances)
		}
		nodes := 0
		for _, n := range t.Sims[p.Key.Cluster].Nodes {
			if n.Labels[types.LabelPool] == p.Key.NodePoolLabel() {
				nodes++
			}
		}
		for _, c := range []struct {
			what string
			n    int
		}{{"provider target", target}, {"machines", machines}, {"cluster nodes", nodes}} {
			if c.n < lo || c.n > hi {
				r.fail("%s: %s %d outside [%d, %d]", id, c.what, c.n, lo, hi)
			}
		}
	}
	return r
}

// checkMachineTimeouts: after settling, no machine is still booting past
// the pool's provision timeout and no node still NotReady past its
// unready timeout; the pool replaces both.
func checkMachineTimeouts(t truth) result {
	r := result{Name: "no machine left past its timeout"}
	for _, p := range t.Spec.Pools {
		provision := p.Policy.EffectiveProvisionTimeout() + 2*p.Policy.ResyncInterval.D() + stuckGrace
		unready := p.Policy.EffectiveUnreadyTimeout() + 2*p.Policy.ResyncInterval.D() + stuckGrace
		nodes := map[string]corev1.Node{}
		for _, n := range t.Sims[p.Key.Cluster].Nodes {
			nodes[n.Name] = n
		}
		for _, g := range t.poolGroups(p.Key) {
			for _, m := range g.Instances {
				r.Checked++
				n, registered := nodes[m.Name]
				ready, since := nodeReady(n)
				switch {
				case (!registered || m.State == connectors.InstanceCreating) && !ready &&
					!m.CreatedAt.IsZero() && t.Pools.ReadAt.Sub(m.CreatedAt) > provision:
					r.fail("%s: machine %s (%s) launched %s ago is not a Ready node (limit %s)", p.Key.WorkflowID(), m.ID, m.Name, t.Pools.ReadAt.Sub(m.CreatedAt).Round(time.Second), provision)
				case registered && m.State == connectors.InstanceRunning && !ready &&
					!since.IsZero() && t.Pools.ReadAt.Sub(since) > unready:
					r.fail("%s: node %s NotReady for %s (limit %s)", p.Key.WorkflowID(), m.Name, t.Pools.ReadAt.Sub(since).Round(time.Second), unready)
				}
			}
		}
	}
	return r
}

// nodeReady is the node's Ready condition and since when it has been so.
func nodeReady(n corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}
