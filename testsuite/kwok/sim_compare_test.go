package kwok

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors/sim"
)

// compareWithSim hands the sim's scheduler what kube-scheduler saw: the
// pool's nodes as they are, the pods bound before the case's workloads
// (and DaemonSet pods) where they are, and the case's pods unbound. The
// sim must bind every pod kube-scheduler bound, and its bindings must keep
// the case's rule as kube-scheduler's do. Which node each pod gets may
// differ: kube-scheduler scores nodes, the sim takes the first that fits.
func (e *env) compareWithSim(t *testing.T, ns string, c schedCase, nodes map[string]corev1.Node) {
	t.Helper()
	ours := map[string]bool{}
	for _, w := range c.workloads {
		ours[w.name] = true
	}
	var nodeList []corev1.Node
	for _, n := range nodes {
		nodeList = append(nodeList, n)
	}
	real, fixed := map[string]string{}, map[string]string{}
	var pods, asBound []corev1.Pod
	for _, p := range e.pods(t, ns) {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" && !isDaemonPod(&p) {
			asBound = append(asBound, p)
		}
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			continue
		}
		if _, inPool := nodes[p.Spec.NodeName]; !inPool {
			continue
		}
		if ours[p.Labels["app"]] {
			real[p.Name] = p.Spec.NodeName
			p.Spec.NodeName = ""
			p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		} else if !isDaemonPod(&p) {
			fixed[p.Name] = p.Spec.NodeName
		}
		pods = append(pods, p)
	}
	binds, unschedulable := sim.Bind(nodeList, pods)
	simulated := map[string]string{}
	for _, b := range binds {
		simulated[b.Pod.Name] = b.Node
	}
	for _, p := range unschedulable {
		t.Errorf("sim: pod %s stays pending; kube-scheduler bound it to %s", p.Name, real[p.Name])
	}
	if len(simulated) != len(real) {
		t.Errorf("sim bound %d pods, kube-scheduler %d", len(simulated), len(real))
	}
	if c.rule == nil {
		return
	}
	if c.liveRule != nil {
		if err := c.liveRule(asBound, ours, nodes); err != nil {
			t.Errorf("kube-scheduler's bindings break the rule: %v", err)
		}
	} else if err := c.rule(real, fixed, nodes); err != nil {
		t.Errorf("kube-scheduler's bindings break the rule: %v", err)
	}
	if err := c.rule(simulated, fixed, nodes); err != nil {
		t.Errorf("sim's bindings break the rule kube-scheduler keeps: %v (sim %v, kube-scheduler %v)", err, simulated, real)
	}
}

// onePerNode: required anti-affinity by hostname among the case's pods.
func onePerNode(bindings, _ map[string]string, _ map[string]corev1.Node) error {
	seen := map[string]string{}
	for pod, node := range bindings {
		if other, dup := seen[node]; dup {
			return fmt.Errorf("pods %s and %s share node %s", pod, other, node)
		}
		seen[node] = pod
	}
	return nil
}

// zoneSkewAtMost: the case's pods and the running pods before them
// (fixed; the spread selector matches both) share the zones of the pool's
// nodes with at most skew between the fullest and the emptiest zone.
func zoneSkewAtMost(skew int) func(bindings, fixed map[string]string, nodes map[string]corev1.Node) error {
	return func(bindings, fixed map[string]string, nodes map[string]corev1.Node) error {
		counts := map[string]int{}
		for _, n := range nodes {
			counts[n.Labels[corev1.LabelTopologyZone]] += 0
		}
		for _, m := range []map[string]string{bindings, fixed} {
			for _, node := range m {
				counts[nodes[node].Labels[corev1.LabelTopologyZone]]++
			}
		}
		lo, hi := -1, 0
		for _, c := range counts {
			if lo < 0 || c < lo {
				lo = c
			}
			hi = max(hi, c)
		}
		if hi-lo > skew {
			return fmt.Errorf("zone counts %v differ by more than %d", counts, skew)
		}
		return nil
	}
}

// zoneSkewAsBound replays kube-scheduler's bindings in the order they
// happened (PodScheduled times, to the second): when each of the case's
// pods bound, its zone's count of matching pods bound in earlier seconds,
// plus itself, exceeded the emptiest zone's by at most skew, over the
// zones of the nodes registered in earlier seconds (a node that did not
// exist yet is no domain; the pod's own zone always is one). Bindings in
// the same second are not ordered against each other, which only loosens
// the check; a scheduler ignoring the spread still fails it.
func zoneSkewAsBound(skew int) func(pods []corev1.Pod, ours map[string]bool, nodes map[string]corev1.Node) error {
	return func(pods []corev1.Pod, ours map[string]bool, nodes map[string]corev1.Node) error {
		type bound struct {
			name, zone string
			at         time.Time
			ours       bool
		}
		var all []bound
		for i := range pods {
			n, inPool := nodes[pods[i].Spec.NodeName]
			at, ok := boundAt(&pods[i])
			if !inPool || !ok {
				continue
			}
			all = append(all, bound{pods[i].Name, n.Labels[corev1.LabelTopologyZone], at, ours[pods[i].Labels["app"]]})
		}
		for _, p := range all {
			if !p.ours {
				continue
			}
			counts := map[string]int{p.zone: 0}
			for _, n := range nodes {
				if n.CreationTimestamp.Time.Before(p.at) {
					counts[n.Labels[corev1.LabelTopologyZone]] += 0
				}
			}
			for _, q := range all {
				if q.at.Before(p.at) {
					counts[q.zone]++
				}
			}
			lo := counts[p.zone]
			for _, c := range counts {
				lo = min(lo, c)
			}
			if counts[p.zone]+1-lo > skew {
				return fmt.Errorf("pod %s bound in zone %s at %s, where %d matching pods were, the emptiest zone %d (zones then %v)",
					p.name, p.zone, p.at.Format(time.TimeOnly), counts[p.zone], lo, counts)
			}
		}
		return nil
	}
}
