package types

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Bounds of NodeObservation.PodTolerations: a node's evictable pods
// mostly share a few toleration sets (one per workload), so a few sets of
// a few tolerations say it for nearly every node, and the observation
// stays small.
const (
	MaxTolerationSets    = 8
	MaxTolerationsPerSet = 16
)

// PodTolerations is one set of tolerations some of a node's evictable
// pods share: how many, one of them by name, and the set (empty: they
// tolerate no taint). Pod "" stands for the pods of further sets the
// observation does not list; they are taken to tolerate nothing.
type PodTolerations struct {
	Pod         string              `json:"pod,omitempty"`
	Count       int                 `json:"count"`
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Untolerated is the first taint of taints that repels these pods from
// scheduling (NoSchedule or NoExecute) and that they do not tolerate, as
// kube-scheduler's TaintToleration filter judges it.
func (s PodTolerations) Untolerated(taints []Taint) (Taint, bool) {
	core := make([]corev1.Taint, 0, len(taints))
	for _, t := range taints {
		core = append(core, t.Core())
	}
	t, bad := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), core, s.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
	return TaintOf(t), bad
}
