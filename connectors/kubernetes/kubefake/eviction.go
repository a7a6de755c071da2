package kubefake

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

var (
	pdbResource = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	pdbKind     = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
)

// evict models the API server's eviction subresource: the UID
// precondition, one PodDisruptionBudget at most, refusal with 429 when it
// allows no disruption, and otherwise a spent disruption and a deleted pod.
// It runs under the fake's lock, so it works on the tracker directly.
func (r *Reactors) evict(action k8stesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "eviction" {
		return false, nil, nil
	}
	eviction, ok := action.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
	if !ok {
		return true, nil, apierrors.NewBadRequest("eviction body must be a policy/v1 Eviction")
	}
	ns, name := action.GetNamespace(), eviction.Name
	r.mu.Lock()
	r.attempts[ns+"/"+name]++
	r.mu.Unlock()

	tracker := r.client.Tracker()
	obj, err := tracker.Get(podsResource, ns, name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*corev1.Pod)
	if opts := eviction.DeleteOptions; opts != nil && opts.Preconditions != nil && opts.Preconditions.UID != nil &&
		*opts.Preconditions.UID != pod.UID {
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), name,
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *opts.Preconditions.UID, pod.UID))
	}
	if pod.DeletionTimestamp != nil {
		return true, nil, nil // already leaving: nothing to spend
	}
	if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		if err := r.spendDisruption(pod); err != nil {
			return true, nil, err
		}
	}
	if err := r.remove(pod); err != nil {
		return true, nil, err
	}
	r.mu.Lock()
	r.evicted[ns+"/"+name]++
	r.mu.Unlock()
	return true, nil, nil
}

// spendDisruption finds the pod's budget and takes one disruption from it.
func (r *Reactors) spendDisruption(pod *corev1.Pod) error {
	tracker := r.client.Tracker()
	obj, err := tracker.List(pdbResource, pdbKind, pod.Namespace)
	if err != nil {
		return err
	}
	var matching []policyv1.PodDisruptionBudget
	for _, pdb := range obj.(*policyv1.PodDisruptionBudgetList).Items {
		if pdb.Spec.Selector == nil {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matching = append(matching, pdb)
	}
	switch {
	case len(matching) == 0:
		return nil
	case len(matching) > 1:
		return apierrors.NewInternalError(fmt.Errorf("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
	}
	pdb := matching[0]
	if pdb.Status.DisruptionsAllowed <= 0 {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy),
		})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	return tracker.Update(pdbResource, &pdb, pdb.Namespace)
}

// remove deletes the pod, or with GracefulEviction marks it terminating.
func (r *Reactors) remove(pod *corev1.Pod) error {
	tracker := r.client.Tracker()
	if !r.opts.GracefulEviction {
		return tracker.Delete(podsResource, pod.Namespace, pod.Name)
	}
	now := metav1.Now()
	pod.DeletionTimestamp = &now
	return tracker.Update(podsResource, pod, pod.Namespace)
}
