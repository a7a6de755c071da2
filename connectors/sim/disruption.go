package sim

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	podsGVR = corev1.SchemeGroupVersion.WithResource("pods")
	podGVK  = corev1.SchemeGroupVersion.WithKind("Pod")
	pdbGVR  = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	pdbGVK  = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
)

// syncDisruptionBudgets is the PDB controller: it sets each budget's
// status (healthy, desired, disruptions allowed) from the pods, which the
// eviction subresource then spends. It holds the fake's lock while it
// reads and writes, so no eviction lands between its count and its write.
func (f *Fleet) syncDisruptionBudgets() error {
	tracker := f.cs.Tracker()
	f.cs.Lock()
	defer f.cs.Unlock()
	obj, err := tracker.List(pdbGVR, pdbGVK, "")
	if err != nil {
		return err
	}
	pdbs := obj.(*policyv1.PodDisruptionBudgetList).Items
	if len(pdbs) == 0 {
		return nil
	}
	obj, err = tracker.List(podsGVR, podGVK, "")
	if err != nil {
		return err
	}
	pods := obj.(*corev1.PodList).Items
	for i := range pdbs {
		pdb := &pdbs[i]
		status, err := budgetStatus(pdb, pods)
		if err != nil || reflect.DeepEqual(status, pdb.Status) {
			continue // an invalid selector or percentage is left as the user wrote it
		}
		pdb.Status = status
		if err := tracker.Update(pdbGVR, pdb, pdb.Namespace); err != nil {
			return err
		}
		f.touch()
	}
	return nil
}

func budgetStatus(pdb *policyv1.PodDisruptionBudget, pods []corev1.Pod) (policyv1.PodDisruptionBudgetStatus, error) {
	s := pdb.Status
	if pdb.Spec.Selector == nil {
		return s, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return s, err
	}
	expected, healthy := 0, 0
	for i := range pods {
		p := &pods[i]
		if p.Namespace == pdb.Namespace && p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
			expected++
			if podReady(p) {
				healthy++
			}
		}
	}
	var desired int
	switch {
	case pdb.Spec.MinAvailable != nil:
		desired, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, expected, true)
	case pdb.Spec.MaxUnavailable != nil:
		var n int
		n, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, expected, true)
		desired = max(0, expected-n)
	}
	if err != nil {
		return s, err
	}
	s.ObservedGeneration = pdb.Generation
	s.ExpectedPods, s.CurrentHealthy, s.DesiredHealthy = int32(expected), int32(healthy), int32(desired)
	s.DisruptionsAllowed = int32(max(0, healthy-desired))
	return s, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
