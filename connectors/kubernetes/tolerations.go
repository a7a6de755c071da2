package kubernetes

import (
	"cmp"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// tolerationSets groups the pods a drain would move, per node, by the
// tolerations they carry (types.NodeObservation.PodTolerations): most
// pods first, then by the set's text; past types.MaxTolerationSets the
// rest are counted in one unnamed entry, which the law takes to tolerate
// nothing.
func tolerationSets(movable []*corev1.Pod) map[string][]types.PodTolerations {
	type set struct {
		key   string
		entry types.PodTolerations
	}
	byNode := map[string]map[string]*set{}
	for _, p := range movable {
		tol := withoutDefaultTolerations(p.Spec.Tolerations)
		slices.SortFunc(tol, func(a, b corev1.Toleration) int {
			return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Operator, b.Operator), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Effect, b.Effect))
		})
		raw, _ := json.Marshal(tol)
		key := string(raw)
		node := p.Spec.NodeName
		if byNode[node] == nil {
			byNode[node] = map[string]*set{}
		}
		s := byNode[node][key]
		if s == nil {
			if len(tol) > types.MaxTolerationsPerSet {
				tol = tol[:types.MaxTolerationsPerSet] // fewer tolerations: judged more strictly, never less
			}
			s = &set{key: key, entry: types.PodTolerations{Pod: podKey(p), Tolerations: tol}}
			byNode[node][key] = s
		}
		s.entry.Count++
		if k := podKey(p); k < s.entry.Pod {
			s.entry.Pod = k
		}
	}
	out := make(map[string][]types.PodTolerations, len(byNode))
	for node, sets := range byNode {
		list := make([]*set, 0, len(sets))
		for _, s := range sets {
			list = append(list, s)
		}
		slices.SortFunc(list, func(a, b *set) int {
			return cmp.Or(cmp.Compare(b.entry.Count, a.entry.Count), cmp.Compare(a.key, b.key))
		})
		var entries []types.PodTolerations
		rest := 0
		for i, s := range list {
			if i < types.MaxTolerationSets {
				entries = append(entries, s.entry)
			} else {
				rest += s.entry.Count
			}
		}
		if rest > 0 {
			entries = append(entries, types.PodTolerations{Count: rest})
		}
		out[node] = entries
	}
	return out
}
