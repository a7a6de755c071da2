package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// evict asks the Eviction API to remove the pod, which lets the API server
// enforce PodDisruptionBudgets. The UID precondition makes sure a pod
// recreated under the same name elsewhere is never the one evicted. gone
// is true when the pod had already left (404, or a different UID: 409).
func (d *Drainer) evict(ctx context.Context, pod *corev1.Pod) (gone bool, err error) {
	uid := pod.UID
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
	}
	err = d.client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, eviction)
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return true, nil
	}
	return false, classifyError("evict pod "+podKey(pod), err)
}
