package sizing

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/hanzoai/visor-fleet/types"
)

// admittingSizes are the usable sizes with a template that filter f admits.
func (in *input) admittingSizes(f int32) []size {
	var out []size
	for _, z := range in.sizes {
		if in.zonesAdmitting(f, &z) > 0 {
			out = append(out, z)
		}
	}
	return out
}

// filterReason names the constraint that refuses every usable size: the
// first nodeSelector pair no template carries, the required node affinity
// when no template matches it, or the taint no toleration covers.
func (in *input) filterReason(f int32) string {
	nf := &in.filters[f]
	nodes := slices.Concat(in.templates[:len(in.sizes)]...)
	if s := nf.sched; s != nil {
		for _, k := range sortedKeys(s.NodeSelector) {
			pair := map[string]string{k: s.NodeSelector[k]}
			if !slices.ContainsFunc(nodes, matchesAffinity(nodeaffinity.NewRequiredNodeAffinity(pair, nil))) {
				return fmt.Sprintf("nodeSelector %s=%s: no size in this pool has that label", k, s.NodeSelector[k]) +
					in.gpuProductHint(k, s.NodeSelector[k])
			}
		}
		if s.NodeAffinity != nil {
			if _, err := nodeaffinity.NewNodeSelector(s.NodeAffinity); err != nil {
				return fmt.Sprintf("required node affinity is invalid: %v", err)
			}
		}
		if s.NodeAffinity != nil && !slices.ContainsFunc(nodes, matchesAffinity(nodeaffinity.NewRequiredNodeAffinity(nil, affinityOf(s.NodeAffinity)))) {
			return fmt.Sprintf("required node affinity %s: no size in this pool matches it", describeNodeSelector(s.NodeAffinity))
		}
	}
	var repelling []string
	tolerated := false
	for _, node := range nodes {
		if t, ok := nf.untolerated(node.named.Spec.Taints); ok {
			repelling = append(repelling, types.TaintOf(t).String())
		} else {
			tolerated = true
		}
	}
	if !tolerated {
		slices.Sort(repelling)
		repelling = slices.Compact(repelling)
		if len(repelling) == 1 {
			return fmt.Sprintf("untolerated taint %s on every size", repelling[0])
		}
		return fmt.Sprintf("untolerated taints on every size: %s", strings.Join(repelling, ", "))
	}
	return "nodeSelector, required node affinity and tolerations together: no size in this pool satisfies all of them"
}

func matchesAffinity(a nodeaffinity.RequiredNodeAffinity) func(filterNode) bool {
	return func(n filterNode) bool {
		ok, err := a.Match(n.named)
		return err == nil && ok
	}
}

// describeNodeSelector writes terms as people read them:
// "disktype In [nvme ssd] or zone NotIn [a]".
func describeNodeSelector(ns *corev1.NodeSelector) string {
	terms := make([]string, 0, len(ns.NodeSelectorTerms))
	for _, t := range ns.NodeSelectorTerms {
		var reqs []string
		for _, group := range [][]corev1.NodeSelectorRequirement{t.MatchExpressions, t.MatchFields} {
			for _, r := range group {
				req := r.Key + " " + string(r.Operator)
				if len(r.Values) > 0 {
					req += " [" + strings.Join(r.Values, " ") + "]"
				}
				reqs = append(reqs, req)
			}
		}
		terms = append(terms, strings.Join(reqs, " and "))
	}
	return strings.Join(terms, " or ")
}

// gpuProductHint points a pod that selects a GPU by the catalog's short
// model ("A10G") at the value GPU feature discovery really labels such
// nodes with ("NVIDIA-A10G"): the scheduler compares label values exactly,
// so a node bought for the short form would never take the pod.
func (in *input) gpuProductHint(key, value string) string {
	if key != LabelGPUProduct || GPUProduct(value) == value {
		return ""
	}
	var sizes []size
	for _, z := range in.sizes {
		if z.t.GPUs > 0 && z.t.GPUModel == value {
			sizes = append(sizes, z)
		}
	}
	if len(sizes) == 0 {
		return ""
	}
	return fmt.Sprintf(" (GPU feature discovery labels %s nodes %s=%s)", sizeList(sizes), LabelGPUProduct, GPUProduct(value))
}
