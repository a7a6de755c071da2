package kwok

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// zoneCase is a pod pinned to one zone by one of the scheduler's rules:
// the pool must buy its node in that zone, and kube-scheduler binds it
// there.
type zoneCase struct {
	name string
	// before are running pods the rule counts (spread), each bound first.
	before []workload
	pinned workload
	zone   string
}

func zoneCases() []zoneCase {
	spreadLabels := map[string]string{"tier": "zspread"}
	inZone := func(name, z string) workload {
		return workload{name: name, replicas: 1, cpu: "100m", mem: "128Mi", labels: spreadLabels,
			spec: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelTopologyZone: z} }}
	}
	return []zoneCase{
		{name: "zone-selector", zone: "kwok-c", pinned: workload{name: "sel", replicas: 2, cpu: "1", mem: "1Gi",
			spec: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelTopologyZone: "kwok-c"} }}},
		{name: "zone-affinity", zone: "kwok-b", pinned: workload{name: "aff", replicas: 2, cpu: "1", mem: "1Gi",
			spec: func(s *corev1.PodSpec) {
				s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"kwok-b"}}}}}}}}
			}}},
		// One running pod of the group in kwok-a and one in kwok-b: with a
		// skew of at most 1 by zone, its next pod is admitted in kwok-c
		// only, and it fits none of the running nodes. A pod of no group
		// fills a node in kwok-c, so the pool has a node in every zone and
		// the provider, left to balance, would put the new one in kwok-a.
		{name: "zone-spread-pinned", zone: "kwok-c",
			before: []workload{inZone("zs-a", "kwok-a"), inZone("zs-b", "kwok-b"),
				{name: "fill-c", replicas: 1, cpu: "1500m", mem: "128Mi",
					spec: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelTopologyZone: "kwok-c"} }}},
			pinned: workload{name: "zs", replicas: 1, cpu: "2", mem: "1Gi", labels: spreadLabels,
				spec: func(s *corev1.PodSpec) {
					s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
						WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: spreadLabels}}}
				}}},
	}
}

// TestRealSchedulerBuysInThePinnedZone: for each way a pod is pinned to a
// zone, the pool buys its node in that zone (the offering's zone reaches
// the kwok provider as NodeGroupSpec.Zone and the node's label) and
// kube-scheduler binds the pod there; no node is bought elsewhere for it.
func TestRealSchedulerBuysInThePinnedZone(t *testing.T) {
	t.Parallel() // its own stack; runs beside the other parallel suites
	e := startEnv(t)
	t.Run("cases", func(t *testing.T) {
		for _, c := range zoneCases() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				e.runZone(t, c)
			})
		}
	})
}

func (e *env) runZone(t *testing.T, c zoneCase) {
	service, ns := "kw-"+c.name, "kw-"+c.name
	key := poolKey(service)
	e.createNamespace(t, ns)
	e.applyPool(t, key, policy())
	for _, w := range c.before {
		e.createWorkload(t, ns, service, w)
		e.waitAllBound(t, ns, key, []workload{w})
	}
	before := e.poolNodes(t, key)
	started := time.Now()
	e.createWorkload(t, ns, service, c.pinned)
	e.waitAllBound(t, ns, key, append(append([]workload(nil), c.before...), c.pinned))
	t.Logf("%s: bound %s after creation", c.name, time.Since(started).Round(time.Millisecond))
	nodes := e.poolNodes(t, key)
	for _, p := range e.pods(t, ns) {
		if p.Labels["app"] != c.pinned.name || p.DeletionTimestamp != nil {
			continue
		}
		n, ok := nodes[p.Spec.NodeName]
		if !ok {
			t.Errorf("pod %s is bound to %q, not a node of the pool", p.Name, p.Spec.NodeName)
			continue
		}
		if got := n.Labels[corev1.LabelTopologyZone]; got != c.zone {
			t.Errorf("pod %s runs on %s in zone %s, pinned to %s", p.Name, n.Name, got, c.zone)
		}
	}
	var bought []string
	for name, n := range nodes {
		if _, old := before[name]; old {
			continue
		}
		bought = append(bought, fmt.Sprintf("%s/%s", n.Labels[corev1.LabelInstanceTypeStable], n.Labels[corev1.LabelTopologyZone]))
		if got := n.Labels[corev1.LabelTopologyZone]; got != c.zone {
			t.Errorf("node %s bought for pods pinned to %s is in %s", name, c.zone, got)
		}
	}
	if len(bought) == 0 {
		t.Errorf("no node bought for the pinned pods")
	}
	t.Logf("%s: bought %v", c.name, bought)
}
