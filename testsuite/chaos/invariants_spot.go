package main

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// devBootDelay is how long visor dev's simulated nodes take to turn Ready
// (its -provision-delay default, which the harness does not change).
const devBootDelay = 10 * time.Second

// offeringUnavailableFor is how long a pool must leave an offering alone
// after the provider said it has no capacity (Karpenter's 3 minutes).
const offeringUnavailableFor = 3 * time.Minute

// checkInterruptionsReplaced: every spot machine warned it goes had a
// replacement of its pool launched between the notice and its deadline
// (with the usual grace for a restart of visor dev in between), and the
// pool acknowledged the notice.
func checkInterruptionsReplaced(t truth) result {
	r := result{Name: "interrupted spot machines replaced by their deadline"}
	for _, id := range t.clusterIDs() {
		inv := t.Sims[id].Inventory
		launched := map[types.PoolKey][]time.Time{}
		for _, g := range inv.Groups {
			for _, m := range g.Group.Instances {
				launched[g.Pool] = append(launched[g.Pool], m.CreatedAt)
			}
		}
		for _, e := range inv.Ended {
			launched[e.Pool] = append(launched[e.Pool], e.Instance.CreatedAt)
		}
		for _, n := range inv.Notices {
			if n.Notice.Deadline.Add(stuckGrace).After(t.Pools.ReadAt) || !t.declared(n.Pool) {
				continue
			}
			r.Checked++
			replaced := false
			for _, at := range launched[n.Pool] {
				if !at.Before(n.Notice.NoticeAt) && !at.After(n.Notice.Deadline.Add(stuckGrace)) {
					replaced = true
				}
			}
			if !replaced {
				r.fail("%s: machine %s warned at %s (notice %s) had no replacement launched by its deadline %s + %s",
					n.Pool.WorkflowID(), n.Notice.InstanceID, n.Notice.NoticeAt.Format(time.RFC3339), n.Notice.ID, n.Notice.Deadline.Format(time.RFC3339), stuckGrace)
			}
			if !n.Acked {
				r.fail("%s: notice %s (deadline %s) was never acknowledged", n.Pool.WorkflowID(), n.Notice.ID, n.Notice.Deadline.Format(time.RFC3339))
			}
		}
	}
	return r
}

// checkPodsHaveNodes: at the last reading no pod of a pool with spot
// machines has waited for a node longer than a notice plus the boot
// delay (plus the pool's pending threshold, two resyncs and the grace):
// an interruption must not leave pods without a node.
func checkPodsHaveNodes(t truth) result {
	r := result{Name: "no pod without a node past notice + boot delay"}
	for _, p := range t.Spec.Pools {
		if !t.hasSpot(p.Key) {
			continue
		}
		notice := sim.DefaultInterruptionNotice
		if f, ok := t.Spec.Faults[p.Key.Cluster]; ok && f.InterruptionNotice.D() > 0 {
			notice = f.InterruptionNotice.D()
		}
		limit := notice + devBootDelay + p.Policy.PendingThreshold.D() + 2*p.Policy.ResyncInterval.D() + stuckGrace
		for _, pod := range t.Sims[p.Key.Cluster].Pods {
			if !ofPool(pod, p.Key) {
				continue
			}
			r.Checked++
			if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
				continue
			}
			if waited := t.Pools.ReadAt.Sub(pod.CreationTimestamp.Time); waited > limit {
				r.fail("%s: pod %s/%s has had no node for %s (limit %s)", p.Key.WorkflowID(), pod.Namespace, pod.Name, waited.Round(time.Second), limit)
			}
		}
	}
	return r
}

// checkOfferingRetries: after the provider refused an offering (a size
// bought one way) for want of capacity, the pool did not ask for it again
// within offeringUnavailableFor. Advisory while the chaos spot pool buys
// spot through its node label: pools mark an offering they bought by
// policy (capacityTypes) unavailable, but the label's spot is bought as
// an on-demand offering in the pool's eyes, and a sim cluster of the
// clusters file cannot yet be given a spot catalog to buy it by policy.
func checkOfferingRetries(t truth) result {
	r := result{Name: "no offering retried while marked unavailable", Advisory: "while the chaos spot pool buys spot by node label, not capacityTypes"}
	for _, id := range t.clusterIDs() {
		last := map[string]sim.CapacityRefusal{}
		refusals := append([]sim.CapacityRefusal(nil), t.Sims[id].Inventory.Refusals...)
		sort.SliceStable(refusals, func(i, j int) bool { return refusals[i].At.Before(refusals[j].At) })
		for _, ref := range refusals {
			if !t.declared(ref.Pool) {
				continue
			}
			r.Checked++
			k := ref.Pool.WorkflowID() + " " + ref.Offering()
			if prev, ok := last[k]; ok && ref.At.Sub(prev.At) < offeringUnavailableFor {
				r.fail("%s: offering %s refused at %s was asked for again %s later", ref.Pool.WorkflowID(), ref.Offering(), prev.At.Format(time.RFC3339), ref.At.Sub(prev.At).Round(time.Second))
				continue // the unavailable window runs from the first refusal
			}
			last[k] = ref
		}
	}
	return r
}

func (t truth) declared(k types.PoolKey) bool {
	for _, p := range t.Spec.Pools {
		if p.Key == k {
			return true
		}
	}
	return false
}

// hasSpot: the pool's nodes are bought as spot (its groups at the last
// reading, or its node labels asking for spot).
func (t truth) hasSpot(k types.PoolKey) bool {
	for _, g := range t.poolGroups(k) {
		if g.CapacityType == types.CapacitySpot {
			return true
		}
	}
	for _, p := range t.Spec.Pools {
		if p.Key == k && p.Policy.NodeLabels[types.CapacityTypeLabel] == string(types.CapacitySpot) {
			return true
		}
	}
	return false
}

func ofPool(pod corev1.Pod, k types.PoolKey) bool {
	l := pod.Labels
	return l[types.LabelOrg] == k.Org && l[types.LabelProject] == k.Project && l[types.LabelService] == k.Service
}
