package sizing

import (
	"encoding/json"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/hanzoai/visor-fleet/types"
)

// nodeFilter is the node-side part of a pod's constraints, shared by every
// pod that writes the same nodeSelector, required node affinity and
// tolerations: whether a node may take such a pod at all, room aside. It
// is evaluated once per template and existing node, not once per pod.
type nodeFilter struct {
	sched    *types.PodScheduling // nil: the pod constrains nothing
	affinity nodeaffinity.RequiredNodeAffinity
	// selects: the pod has a nodeSelector or required node affinity;
	// byName: some term has matchFields (metadata.name), so the node's
	// name must be shown to the matcher.
	selects, byName bool
	// readsZone: the filter reads the zone label, so a size's zone
	// templates may differ for it; otherwise they all answer alike.
	readsZone bool
}

// filterNode is a node as the filters see it, twice: the matcher builds a
// field set from a node's name on every call, and a node shown without its
// name skips that (and matchFields, which only name-reading filters have).
// That keeps thousands of filters × hundreds of templates cheap.
type filterNode struct {
	named, anonymous *corev1.Node
}

func newFilterNode(n *corev1.Node) filterNode {
	anonymous := *n
	anonymous.Name = ""
	return filterNode{named: n, anonymous: &anonymous}
}

// unconstrained is the filter of pods without nodeSelector, affinity or
// tolerations: they still cannot go where a taint repels them.
const unconstrained = 0

func newNodeFilter(s *types.PodScheduling) nodeFilter {
	if s == nil {
		return nodeFilter{}
	}
	f := nodeFilter{sched: s, affinity: nodeaffinity.NewRequiredNodeAffinity(s.NodeSelector, affinityOf(s.NodeAffinity)),
		selects: len(s.NodeSelector) > 0 || s.NodeAffinity != nil}
	_, f.readsZone = s.NodeSelector[corev1.LabelTopologyZone]
	if s.NodeAffinity != nil {
		for _, t := range s.NodeAffinity.NodeSelectorTerms {
			f.byName = f.byName || len(t.MatchFields) > 0
			for _, r := range t.MatchExpressions {
				f.readsZone = f.readsZone || r.Key == corev1.LabelTopologyZone
			}
		}
	}
	return f
}

func affinityOf(ns *corev1.NodeSelector) *corev1.Affinity {
	if ns == nil {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: ns}}
}

// quiet drops the scheduling helpers' logging (a malformed numeric
// toleration is simply not a match).
var quiet = logr.Discard()

// admits is the kube-scheduler's NodeAffinity and TaintToleration filters.
func (f *nodeFilter) admits(node filterNode) bool {
	_, untolerated := f.untolerated(node.named.Spec.Taints)
	return !untolerated && f.matches(node)
}

// matches is the NodeAffinity filter alone (nodeSelector and required
// node affinity).
func (f *nodeFilter) matches(node filterNode) bool {
	if !f.selects {
		return true
	}
	shown := node.anonymous
	if f.byName {
		shown = node.named
	}
	ok, err := f.affinity.Match(shown)
	return err == nil && ok
}

// untolerated is the first taint that repels the pod from scheduling
// (NoSchedule or NoExecute) which its tolerations do not tolerate.
func (f *nodeFilter) untolerated(taints []corev1.Taint) (corev1.Taint, bool) {
	var tolerations []corev1.Toleration
	if f.sched != nil {
		tolerations = f.sched.Tolerations
	}
	return corev1helpers.FindMatchingUntoleratedTaint(quiet, taints, tolerations, repelsScheduling, true)
}

func repelsScheduling(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// filterSignature is the canonical text of a pod's node-side constraints,
// "" when it has none.
func filterSignature(s *types.PodScheduling) string {
	if s == nil || (len(s.NodeSelector) == 0 && s.NodeAffinity == nil && len(s.Tolerations) == 0) {
		return ""
	}
	b, _ := json.Marshal(struct {
		S map[string]string    `json:"s,omitempty"`
		A *corev1.NodeSelector `json:"a,omitempty"`
		T []corev1.Toleration  `json:"t,omitempty"`
	}{s.NodeSelector, s.NodeAffinity, s.Tolerations})
	return string(b)
}

// startupTaints go away once a booting node is up; judging a booting node
// by them would make every pod "not fit" the node bought for it.
var startupTaints = map[string]bool{
	corev1.TaintNodeNotReady:                         true,
	corev1.TaintNodeUnreachable:                      true,
	"node.cloudprovider.kubernetes.io/uninitialized": true,
	corev1.TaintNodeNetworkUnavailable:               true,
}

// prepareTemplates builds the template nodes of every usable and excluded
// size and evaluates each node filter against them once.
func (in *input) prepareTemplates(opts TemplateOptions) {
	all := append(append([]size(nil), in.sizes...), in.excluded...)
	in.templates = make([][]filterNode, len(all))
	for i, z := range all {
		for _, nt := range Templates(z.t, opts) {
			in.templates[i] = append(in.templates[i], newFilterNode(nt.Node()))
		}
	}
	for i := range in.sizes {
		in.sizes[i].index = i
	}
	for i := range in.excluded {
		in.excluded[i].index = len(in.sizes) + i
	}
	n := len(all)
	in.admitZones = make([]int32, len(in.filters)*n)
	taints := coreTaints(opts.Taints)
	for f := range in.filters {
		// Every template carries the pool's taints: tolerated once, for all.
		if _, repelled := in.filters[f].untolerated(taints); repelled {
			continue
		}
		for i, nodes := range in.templates {
			zones := int32(0)
			if !in.filters[f].readsZone {
				if in.filters[f].matches(nodes[0]) {
					zones = int32(len(nodes))
				}
			} else {
				for _, node := range nodes {
					if in.filters[f].matches(node) {
						zones++
					}
				}
			}
			in.admitZones[f*n+i] = zones
		}
	}
}

// zonesAdmitting is how many of size z's zone templates (one when it names
// no zones) take pods with filter f; 0 means none.
func (in *input) zonesAdmitting(f int32, z *size) int32 {
	return in.admitZones[int(f)*len(in.templates)+z.index]
}

// existingNodeObject is the node as the filters see it: its own labels and
// lasting taints once registered, its size's template before that.
func existingNodeObject(n types.NodeObservation, catalog []types.InstanceType, opts TemplateOptions) filterNode {
	if len(n.Labels) == 0 {
		for _, t := range catalog {
			if t.Name == n.Size {
				return newFilterNode(NodeTemplate{Size: t.Name, Labels: templateLabels(t, "", opts), Taints: opts.Taints}.Node())
			}
		}
		return newFilterNode(&corev1.Node{})
	}
	node := &corev1.Node{}
	node.Name, node.Labels = n.Name, n.Labels
	for _, t := range n.Taints {
		if !startupTaints[t.Key] {
			node.Spec.Taints = append(node.Spec.Taints, t.Core())
		}
	}
	return newFilterNode(node)
}

// existingAdmits says whether existing node i takes pods with filter f,
// evaluated at most once per pair.
func (in *input) existingAdmits(f int32, i int) bool {
	k := int(f)*len(in.existing) + i
	if in.existingMemo[k] == 0 {
		in.existingMemo[k] = 2
		if in.filters[f].admits(in.existing[i].node) {
			in.existingMemo[k] = 1
		}
	}
	return in.existingMemo[k] == 1
}
