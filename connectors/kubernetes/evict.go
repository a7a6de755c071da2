package kubernetes

import (
	"context"
	"fmt"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"

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

// evictBefore bounds one eviction call by the drain deadline. client-go
// silently retries a 429 that carries Retry-After (as a PDB whose status
// is not observed yet answers) up to ten times; without the bound one call
// could outlive the deadline by minutes. Running out of time is reported
// as rate-limited, so the drain loop sees the deadline and gives up
// cleanly (uncordoning) instead of failing half-way.
func (d *Drainer) evictBefore(ctx context.Context, pod *corev1.Pod, opts connectors.DrainOptions) (bool, error) {
	left := opts.Deadline.Sub(d.now())
	if left <= 0 {
		return false, errclass.New(errclass.RateLimited, providerName, "evict pod "+podKey(pod), context.DeadlineExceeded)
	}
	ectx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	gone, err := d.evict(ectx, pod)
	if err != nil && ectx.Err() != nil && ctx.Err() == nil {
		return false, errclass.New(errclass.RateLimited, providerName, "evict pod "+podKey(pod), fmt.Errorf("drain deadline reached during the call: %w", err))
	}
	return gone, err
}
