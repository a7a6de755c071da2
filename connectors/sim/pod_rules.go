package sim

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// placedPods are the pods on each node as the binding pass goes: those
// bound before it and those it binds. They are what kube-scheduler's
// pod-to-pod filters read, the same rules sizing models (podrules.go):
// NodePorts (host ports), InterPodAffinity (required anti-affinity, both
// ways: the pod's own terms and the terms of pods already placed) and
// PodTopologySpread (DoNotSchedule constraints).
type placedPods struct {
	nodes  []corev1.Node
	byNode map[string][]*corev1.Pod
}

func newPlacedPods(nodes []corev1.Node) *placedPods {
	return &placedPods{nodes: nodes, byNode: make(map[string][]*corev1.Pod, len(nodes))}
}

func (pp *placedPods) add(node string, p *corev1.Pod) { pp.byNode[node] = append(pp.byNode[node], p) }

// admits is the pod-to-pod filters for pod p on node n.
func (pp *placedPods) admits(n *corev1.Node, p *corev1.Pod) bool {
	return pp.hostPortsFree(n, p) && pp.antiAffinityAllows(n, p) && pp.spreadAllows(n, p)
}

// hostPortsFree is the NodePorts filter: no placed pod on n uses one of
// p's host ports (same protocol and port; host IPs are not told apart).
func (pp *placedPods) hostPortsFree(n *corev1.Node, p *corev1.Pod) bool {
	want := hostPorts(p)
	if len(want) == 0 {
		return true
	}
	for _, other := range pp.byNode[n.Name] {
		for port := range hostPorts(other) {
			if want[port] {
				return false
			}
		}
	}
	return true
}

type hostPort struct {
	protocol corev1.Protocol
	port     int32
}

func hostPorts(p *corev1.Pod) map[hostPort]bool {
	var out map[hostPort]bool
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			if out == nil {
				out = map[hostPort]bool{}
			}
			proto := port.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			out[hostPort{proto, port.HostPort}] = true
		}
	}
	return out
}

// antiAffinityAllows is InterPodAffinity's required anti-affinity: no
// placed pod in n's topology domain matches one of p's terms, and p
// matches no term of a placed pod in that pod's domain.
func (pp *placedPods) antiAffinityAllows(n *corev1.Node, p *corev1.Pod) bool {
	own := antiAffinityTerms(p)
	for i := range pp.nodes {
		other := &pp.nodes[i]
		for _, q := range pp.byNode[other.Name] {
			for _, t := range own {
				if sameDomain(n, other, t.TopologyKey) && termMatches(t, p, q) {
					return false
				}
			}
			for _, t := range antiAffinityTerms(q) {
				if sameDomain(n, other, t.TopologyKey) && termMatches(t, q, p) {
					return false
				}
			}
		}
	}
	return true
}

func antiAffinityTerms(p *corev1.Pod) []corev1.PodAffinityTerm {
	if p.Spec.Affinity == nil || p.Spec.Affinity.PodAntiAffinity == nil {
		return nil
	}
	return p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// sameDomain: both nodes carry the topology key with the same value.
func sameDomain(a, b *corev1.Node, key string) bool {
	va, ok := a.Labels[key]
	if !ok {
		return false
	}
	vb, ok := b.Labels[key]
	return ok && va == vb
}

// termMatches: term, written on owner, selects pod q (its namespaces
// default to owner's; a namespaceSelector is not modelled).
func termMatches(t corev1.PodAffinityTerm, owner, q *corev1.Pod) bool {
	inNamespace := q.Namespace == owner.Namespace
	if len(t.Namespaces) > 0 {
		inNamespace = false
		for _, ns := range t.Namespaces {
			inNamespace = inNamespace || ns == q.Namespace
		}
	}
	return inNamespace && selects(t.LabelSelector, q.Labels)
}

func selects(ls *metav1.LabelSelector, l map[string]string) bool {
	if ls == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	return err == nil && sel.Matches(labels.Set(l))
}

// spreadAllows is PodTopologySpread for DoNotSchedule constraints: on the
// nodes p's node affinity admits (nodeAffinityPolicy Honor, taints
// ignored: the defaults) and that carry the key, placing p in n's domain
// must leave that domain at most maxSkew above the emptiest one. A node
// without the key takes no such pod. minDomains, matchLabelKeys and
// ScheduleAnyway constraints are not modelled (sizing does not either).
func (pp *placedPods) spreadAllows(n *corev1.Node, p *corev1.Pod) bool {
	affinity := nodeaffinity.GetRequiredNodeAffinity(p)
	for _, c := range p.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		domain, ok := n.Labels[c.TopologyKey]
		if !ok {
			return false
		}
		counts := map[string]int32{}
		for i := range pp.nodes {
			other := &pp.nodes[i]
			d, ok := other.Labels[c.TopologyKey]
			if !ok {
				continue
			}
			if match, err := affinity.Match(other); err != nil || !match {
				continue
			}
			if _, seen := counts[d]; !seen {
				counts[d] = 0
			}
			for _, q := range pp.byNode[other.Name] {
				if q.Namespace == p.Namespace && selects(c.LabelSelector, q.Labels) {
					counts[d]++
				}
			}
		}
		lowest, first := int32(0), true
		for _, v := range counts {
			if first || v < lowest {
				lowest, first = v, false
			}
		}
		self := int32(0)
		if selects(c.LabelSelector, p.Labels) {
			self = 1
		}
		if counts[domain]+self-lowest > c.MaxSkew {
			return false
		}
	}
	return true
}
