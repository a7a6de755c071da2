package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/hanzoai/visor-fleet/types"
)

// zoneSpreadCounter counts, per zone, the bound pods a pending pod's zone
// spread selector matches, as the PodTopologySpread filter does: pods of
// the pending pod's namespace, not terminating, on a node that has a zone.
// Only nodes the observer lists (the pools' nodes) have a known zone, so
// pods on other nodes are not counted.
type zoneSpreadCounter struct {
	zoneOf map[string]string // node name -> zone
	bound  map[string][]*corev1.Pod
	memo   map[string]map[string]int32
}

func newZoneSpreadCounter(nodes []corev1.Node, pods []corev1.Pod) *zoneSpreadCounter {
	c := &zoneSpreadCounter{zoneOf: map[string]string{}, bound: map[string][]*corev1.Pod{}, memo: map[string]map[string]int32{}}
	for i := range nodes {
		if z := nodes[i].Labels[corev1.LabelTopologyZone]; z != "" {
			c.zoneOf[nodes[i].Name] = z
		}
	}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || isTerminal(p) || isTerminating(p) || c.zoneOf[p.Spec.NodeName] == "" {
			continue
		}
		c.bound[p.Namespace] = append(c.bound[p.Namespace], p)
	}
	return c
}

// annotate fills s.ZoneSpreadPods for the pod's zone spread constraints.
func (c *zoneSpreadCounter) annotate(namespace string, s *types.PodScheduling) {
	if s == nil {
		return
	}
	var counts []map[string]int32
	counted := false
	for i, sc := range s.TopologySpread {
		if sc.TopologyKey != corev1.LabelTopologyZone {
			continue
		}
		if counts == nil {
			counts = make([]map[string]int32, len(s.TopologySpread))
		}
		counts[i] = c.count(namespace, sc.LabelSelector)
		counted = counted || counts[i] != nil
	}
	if counted {
		s.ZoneSpreadPods = counts
	}
}

func (c *zoneSpreadCounter) count(namespace string, sel *metav1.LabelSelector) map[string]int32 {
	key := namespace + "\x00" + sel.String()
	if m, ok := c.memo[key]; ok {
		return m
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || sel == nil {
		selector = labels.Nothing() // a nil selector matches no pod, as in the scheduler
	}
	m := map[string]int32{}
	for _, p := range c.bound[namespace] {
		if selector.Matches(labels.Set(p.Labels)) {
			m[c.zoneOf[p.Spec.NodeName]]++
		}
	}
	if len(m) == 0 {
		m = nil
	}
	c.memo[key] = m
	return m
}
