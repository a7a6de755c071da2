package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	k8s "k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/visor-fleet/types"
)

// syncPoll is how often a sample waiting for the first sync checks whether
// the caches filled or a list/watch failed.
const syncPoll = 50 * time.Millisecond

// staleAfterError is how long a list or watch failure makes samples fail.
// The reflector retries with a backoff capped at 30 s and reports every
// failure, so a persistent one (a missing verb, an unreachable server)
// keeps failing samples instead of serving a cache that no longer moves.
const staleAfterError = time.Minute

// informerCache holds the pods and pool nodes the list calls would return,
// kept current by one watch each. Each resource has its own factory because
// a factory applies one set of list options to all its informers.
type informerCache struct {
	cancel    context.CancelFunc
	factories []informers.SharedInformerFactory
	synced    []cache.InformerSynced
	pods      listersv1.PodLister
	nodes     listersv1.NodeLister
	// podInformer and nodeInformer feed change notifications (changes.go).
	podInformer, nodeInformer cache.SharedIndexInformer

	mu       sync.Mutex
	lastErr  error // the latest list or watch failure
	failed   string
	failedAt time.Time
}

func startInformerCache(client k8s.Interface) *informerCache {
	c := &informerCache{}
	podFactory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selectorNonTerminal }))
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = types.LabelPool }))
	pods, nodes := podFactory.Core().V1().Pods(), nodeFactory.Core().V1().Nodes()
	for op, informer := range map[string]cache.SharedIndexInformer{
		"watch pods (" + selectorNonTerminal + ")": pods.Informer(),
		"watch nodes (" + types.LabelPool + ")":    nodes.Informer(),
	} {
		// Both must be set before the informer starts.
		_ = informer.SetTransform(dropManagedFields)
		_ = informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { c.recordError(op, err) })
		c.synced = append(c.synced, informer.HasSynced)
	}
	c.pods, c.nodes = pods.Lister(), nodes.Lister()
	c.podInformer, c.nodeInformer = pods.Informer(), nodes.Informer()
	c.factories = []informers.SharedInformerFactory{podFactory, nodeFactory}

	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	return c
}

// dropManagedFields keeps the cache to what the observer reads: managed
// fields are often the largest part of a pod, and of them the observer
// reads only the time of kube-scheduler's last status write
// (schedulerTriedAt), kept without its field set.
func dropManagedFields(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	var kept []metav1.ManagedFieldsEntry
	if _, pod := obj.(*corev1.Pod); pod {
		for _, e := range m.GetManagedFields() {
			if isSchedulerStatusWrite(e) {
				e.FieldsV1 = nil
				kept = append(kept, e)
			}
		}
	}
	m.SetManagedFields(kept)
	return obj, nil
}

func (c *informerCache) recordError(op string, err error) {
	// A watch that ends or expires is routine: the reflector resumes or
	// relists at once (client-go's default handler does not warn on these).
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr, c.failed, c.failedAt = err, op, time.Now()
}

// recentError is the latest list or watch failure if it is recent enough
// that the cache may have stopped following the cluster.
func (c *informerCache) recentError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == nil || time.Since(c.failedAt) > staleAfterError {
		return nil
	}
	return classifyError(c.failed, c.lastErr)
}

func (c *informerCache) hasSynced() bool {
	for _, s := range c.synced {
		if !s() {
			return false
		}
	}
	return true
}

// waitSynced waits for the first full list of both caches. A recent list
// or watch failure, before or after, is returned (classified, so a missing
// verb is Permanent) rather than waited out or served stale: the informers
// keep retrying in the background and a later sample finds them current.
func (c *informerCache) waitSynced(ctx context.Context) error {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for !c.hasSynced() {
		if err := c.recentError(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return classifyError("wait for the pod and node caches", ctx.Err())
		case <-tick.C:
		}
	}
	return c.recentError()
}

// objects copies the cache contents in the order the list calls return
// them (namespace, then name), so both paths group identical input.
func (c *informerCache) objects(ctx context.Context) ([]corev1.Node, []corev1.Pod, error) {
	if err := c.waitSynced(ctx); err != nil {
		return nil, nil, err
	}
	cachedNodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, nil, classifyError("read the node cache", err)
	}
	cachedPods, err := c.pods.List(labels.Everything())
	if err != nil {
		return nil, nil, classifyError("read the pod cache", err)
	}
	slices.SortFunc(cachedNodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(cachedPods, func(a, b *corev1.Pod) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	// Shallow copies: cached objects are shared and the grouping only reads.
	nodes := make([]corev1.Node, len(cachedNodes))
	for i, n := range cachedNodes {
		nodes[i] = *n
	}
	pods := make([]corev1.Pod, len(cachedPods))
	for i, p := range cachedPods {
		pods[i] = *p
	}
	return nodes, pods, nil
}

func (c *informerCache) stop() {
	c.cancel()
	for _, f := range c.factories {
		f.Shutdown()
	}
}
