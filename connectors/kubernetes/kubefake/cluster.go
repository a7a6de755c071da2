package kubefake

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

var (
	podsResource = corev1.SchemeGroupVersion.WithResource("pods")
	podKind      = corev1.SchemeGroupVersion.WithKind("Pod")
)

// Options change how the reactors behave.
type Options struct {
	// GracefulEviction leaves an evicted pod terminating (deletionTimestamp
	// set) until FinishTerminating, as a kubelet would; otherwise it is
	// deleted at once.
	GracefulEviction bool
}

// Reactors are the installed behaviour plus what it recorded.
type Reactors struct {
	client *fake.Clientset
	opts   Options

	mu       sync.Mutex
	attempts map[string]int // eviction calls by namespace/name
	evicted  map[string]int // evictions that removed the pod, by namespace/name
}

// NewClientset returns a fake clientset holding objects, with the reactors
// installed.
func NewClientset(opts Options, objects ...runtime.Object) (*fake.Clientset, *Reactors) {
	client := fake.NewClientset(objects...)
	return client, Install(client, opts)
}

// Install prepends the reactors to client, so they run before the fake's
// own object tracker.
func Install(client *fake.Clientset, opts Options) *Reactors {
	r := &Reactors{client: client, opts: opts, attempts: map[string]int{}, evicted: map[string]int{}}
	tracker := client.Tracker()
	client.PrependReactor("list", "pods", fieldSelectingList(tracker, "Pod", podFields))
	client.PrependReactor("list", "nodes", fieldSelectingList(tracker, "Node", nodeFields))
	client.PrependReactor("create", "pods", r.evict)
	return r
}

// EvictionAttempts is how many times the pod's eviction was asked for.
func (r *Reactors) EvictionAttempts(namespace, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts[namespace+"/"+name]
}

// Evictions is how many evictions of the pod succeeded (a correct drain
// never exceeds one).
func (r *Reactors) Evictions(namespace, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.evicted[namespace+"/"+name]
}

// FinishTerminating deletes every terminating pod, as kubelets do once
// containers stop; it returns how many went.
func (r *Reactors) FinishTerminating() (int, error) {
	tracker := r.client.Tracker()
	obj, err := tracker.List(podsResource, podKind, "")
	if err != nil {
		return 0, err
	}
	gone := 0
	for _, p := range obj.(*corev1.PodList).Items {
		if p.DeletionTimestamp == nil {
			continue
		}
		if err := tracker.Delete(podsResource, p.Namespace, p.Name); err != nil {
			return gone, err
		}
		gone++
	}
	return gone, nil
}
