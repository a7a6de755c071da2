package sim

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"
)

var (
	podsGVR = corev1.SchemeGroupVersion.WithResource("pods")
	podGVK  = corev1.SchemeGroupVersion.WithKind("Pod")
	pdbGVR  = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	pdbGVK  = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
)

// evictionReactor makes the Eviction API behave as the API server's does:
// the fake only records it. A missing pod is 404, a PodDisruptionBudget
// that cannot afford the disruption is 429, otherwise the pod is deleted.
// It runs under the fake's lock, so it talks to the tracker directly.
func evictionReactor(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := a.(k8stesting.CreateAction)
		if !ok || a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		m, err := meta.Accessor(create.GetObject())
		if err != nil {
			return true, nil, apierrors.NewBadRequest("eviction without metadata: " + err.Error())
		}
		obj, err := tracker.Get(podsGVR, a.GetNamespace(), m.GetName())
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod)
		if err := checkDisruptionBudgets(tracker, pod); err != nil {
			return true, nil, err
		}
		return true, nil, tracker.Delete(podsGVR, pod.Namespace, pod.Name)
	}
}

// checkDisruptionBudgets applies policy/v1 semantics with a PDB controller
// that is never behind: a ready pod may go only if the budget allows one
// more disruption; an unready one while the budget is met (IfHealthyBudget).
func checkDisruptionBudgets(tracker k8stesting.ObjectTracker, pod *corev1.Pod) error {
	obj, err := tracker.List(pdbGVR, pdbGVK, pod.Namespace)
	if err != nil {
		return err
	}
	var matching []policyv1.PodDisruptionBudget
	for _, pdb := range obj.(*policyv1.PodDisruptionBudgetList).Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(pod.Labels)) {
			matching = append(matching, pdb)
		}
	}
	switch len(matching) {
	case 0:
		return nil
	case 1:
	default:
		return apierrors.NewInternalError(errors.New("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
	}
	pdb := matching[0]
	sel, _ := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	podsObj, err := tracker.List(podsGVR, podGVK, pod.Namespace)
	if err != nil {
		return err
	}
	expected, healthy := 0, 0
	for _, p := range podsObj.(*corev1.PodList).Items {
		if p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
			expected++
			if podReady(&p) {
				healthy++
			}
		}
	}
	desired, err := desiredHealthy(pdb, expected)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	alwaysAllow := pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow
	if !podReady(pod) && (alwaysAllow || healthy >= desired) {
		return nil
	}
	if healthy-desired >= 1 {
		return nil
	}
	e := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	if e.ErrStatus.Details == nil {
		e.ErrStatus.Details = &metav1.StatusDetails{}
	}
	e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, desired, healthy),
	})
	return e
}

func desiredHealthy(pdb policyv1.PodDisruptionBudget, expected int) (int, error) {
	switch {
	case pdb.Spec.MinAvailable != nil:
		return intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, expected, true)
	case pdb.Spec.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, expected, true)
		return max(0, expected-n), err
	}
	return 0, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
