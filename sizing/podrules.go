package sizing

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/hanzoai/visor-fleet/types"
)

// The pod-to-pod rules (host ports, required anti-affinity on hostname,
// DoNotSchedule spread on hostname and zone) become two numbers per shape
// that the packer honours: a cap on how many of its pods one node takes,
// and whether its nodes are its own. A shape whose rules clash with another
// shape (shared host port, an anti-affinity or hostname spread selector
// matching the other's pods) is isolated: it gets nodes no other shape
// shares. That can cost a node more than a perfect packing, never a node
// the scheduler would refuse.

// anySelectors reports whether some pod carries an anti-affinity or spread
// selector; only then do pod labels split shapes.
func anySelectors(pods []types.PendingPod) bool {
	return slices.ContainsFunc(pods, func(p types.PendingPod) bool {
		return p.Scheduling != nil && (len(p.Scheduling.AntiAffinity) > 0 || len(p.Scheduling.TopologySpread) > 0)
	})
}

// podSignature is the canonical text of a pod's pod-to-pod rules and, when
// selectors are about, its namespace and labels; "" when none matter.
func podSignature(p *types.PendingPod, withLabels bool) string {
	s := p.Scheduling
	if s == nil {
		return ""
	}
	selectors := len(s.AntiAffinity) > 0 || len(s.TopologySpread) > 0
	withLabels = withLabels && len(s.Labels) > 0
	if len(s.HostPorts) == 0 && !selectors && !withLabels {
		return ""
	}
	var sig struct {
		N string                            `json:"n,omitempty"`
		O [3]string                         `json:"o,omitzero"`
		L map[string]string                 `json:"l,omitempty"`
		P []types.HostPort                  `json:"p,omitempty"`
		A []corev1.PodAffinityTerm          `json:"a,omitempty"`
		T []corev1.TopologySpreadConstraint `json:"t,omitempty"`
		Z []map[string]int32                `json:"z,omitempty"`
	}
	if selectors || withLabels {
		sig.N = p.Namespace
	}
	if withLabels {
		sig.O, sig.L = [3]string{p.Org, p.Project, p.Service}, s.Labels
	}
	sig.P, sig.A, sig.T, sig.Z = s.HostPorts, s.AntiAffinity, s.TopologySpread, s.ZoneSpreadPods
	b, _ := json.Marshal(sig)
	return string(b)
}

// resolveConstraints numbers the node filters and turns pod-to-pod rules
// into caps and isolation, once per shape.
func (in *input) resolveConstraints() {
	ids := map[string]int32{"": unconstrained}
	in.filters = []nodeFilter{{}}
	for i := range in.shapes {
		sh := &in.shapes[i]
		id, ok := ids[sh.filterSig]
		if !ok {
			id = int32(len(in.filters))
			ids[sh.filterSig] = id
			in.filters = append(in.filters, newNodeFilter(sh.sched))
		}
		sh.filter = id
	}
	in.applyHostPorts()
	if in.selectors {
		in.applySelectors()
	}
}

// portKey is a host port as conflicts see it. Pods binding the same
// protocol and port are treated as clashing whatever their IPs: binding one
// IP of several is rare, and assuming a clash only costs a node.
type portKey struct {
	protocol corev1.Protocol
	port     int32
}

func keyOfPort(h types.HostPort) portKey {
	p := h.Protocol
	if p == "" {
		p = corev1.ProtocolTCP
	}
	return portKey{protocol: p, port: h.Port}
}

// applyHostPorts: a node takes one pod per host port, so a shape with host
// ports gets one pod per node, and shapes sharing a port are isolated.
func (in *input) applyHostPorts() {
	users := map[portKey]int{}
	for i := range in.shapes {
		sh := &in.shapes[i]
		if sh.sched == nil || len(sh.sched.HostPorts) == 0 {
			continue
		}
		sh.cap = 1
		seen := map[portKey]bool{}
		for _, h := range sh.sched.HostPorts {
			if k := keyOfPort(h); !seen[k] {
				seen[k] = true
				users[k]++
			}
		}
	}
	for i := range in.shapes {
		sh := &in.shapes[i]
		if sh.sched == nil {
			continue
		}
		for _, h := range sh.sched.HostPorts {
			if users[keyOfPort(h)] > 1 {
				sh.isolated = true
			}
		}
	}
}

// labelSet is one distinct (namespace, labels) among the shapes.
type labelSet struct {
	namespace string
	labels    labels.Set
	shapes    int
}

// applySelectors evaluates each distinct selector once against each
// distinct label set.
func (in *input) applySelectors() {
	setIDs := map[string]int32{}
	var sets []labelSet
	own := make([]int32, len(in.shapes))
	for i := range in.shapes {
		sh := &in.shapes[i]
		l := sh.podLabels()
		k := sh.namespace + "\x00" + canonicalLabels(l)
		id, ok := setIDs[k]
		if !ok {
			id = int32(len(sets))
			setIDs[k] = id
			sets = append(sets, labelSet{namespace: sh.namespace, labels: l})
		}
		sets[id].shapes++
		own[i] = id
	}
	cache := map[string][]int32{}
	matches := func(sel *metav1.LabelSelector, namespaces []string, all bool, shape int) (self, others bool) {
		ck := canonicalSelector(sel, namespaces, all)
		hit, ok := cache[ck]
		if !ok {
			selector, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				selector = labels.Nothing() // the API server would have refused it
			}
			for id, set := range sets {
				if (all || slices.Contains(namespaces, set.namespace)) && selector.Matches(set.labels) {
					hit = append(hit, int32(id))
				}
			}
			cache[ck] = hit
		}
		for _, id := range hit {
			if id == own[shape] {
				self = true
				others = others || sets[id].shapes > 1
			} else {
				others = true
			}
		}
		return self, others
	}
	for i := range in.shapes {
		sh := &in.shapes[i]
		if sh.sched == nil {
			continue
		}
		for _, term := range sh.sched.AntiAffinity {
			if term.TopologyKey != corev1.LabelHostname {
				continue
			}
			namespaces := term.Namespaces
			if len(namespaces) == 0 {
				namespaces = []string{sh.namespace}
			}
			// A namespace selector may reach any namespace: assume it does.
			self, others := matches(term.LabelSelector, namespaces, term.NamespaceSelector != nil, i)
			if self {
				sh.cap = 1
			}
			sh.isolated = sh.isolated || others
		}
		for j, c := range sh.sched.TopologySpread {
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				continue
			}
			self, others := matches(c.LabelSelector, []string{sh.namespace}, false, i)
			switch c.TopologyKey {
			case corev1.LabelHostname:
				// New nodes start empty, so the emptiest node has none of
				// these pods and maxSkew is how many one node may take.
				if self {
					sh.cap = minCap(sh.cap, int64(max(c.MaxSkew, 1)))
				}
				sh.isolated = sh.isolated || others
			case corev1.LabelTopologyZone:
				sh.zoneSpread = sh.zoneSpread || self
				if j < len(sh.sched.ZoneSpreadPods) && sh.sched.ZoneSpreadPods[j] != nil {
					sh.zoneCounts = append(sh.zoneCounts, zoneCount{pods: sh.sched.ZoneSpreadPods[j], maxSkew: max(c.MaxSkew, 1), self: self})
				}
			}
		}
	}
}

// podLabels are the labels selectors see: the captured ones and the
// tenant labels, which PendingPod carries in its own fields.
func (s shape) podLabels() labels.Set {
	l := labels.Set{}
	if s.sched != nil {
		maps.Copy(l, s.sched.Labels)
	}
	for i, k := range [3]string{types.LabelOrg, types.LabelProject, types.LabelService} {
		if s.tenant[i] != "" {
			l[k] = s.tenant[i]
		}
	}
	return l
}

// minCap is the smaller cap, 0 meaning unlimited.
func minCap(a, b int64) int64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// capOn is how many pods of the shape one new node of a size with zones
// admitting zones may take, 0 meaning no limit beyond room. Zone spread
// deals the shape's pods evenly over the zones, so each node takes at most
// its zone's share; a size without zones is one zone (its region), where
// any spread is even.
func (s *shape) capOn(zones int32) int64 {
	c := s.cap
	if s.zoneSpread && zones > 1 {
		c = minCap(c, (s.count()+int64(zones)-1)/int64(zones))
	}
	return c
}

func canonicalLabels(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

func canonicalSelector(sel *metav1.LabelSelector, namespaces []string, all bool) string {
	b, _ := json.Marshal(struct {
		S *metav1.LabelSelector `json:"s"`
		N []string              `json:"n"`
		A bool                  `json:"a"`
	}{sel, namespaces, all})
	return string(b)
}
