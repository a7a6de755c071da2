package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

var _ connectors.ChangeSource = (*Observer)(nil)

// WatchChanges tells notify, from the informer cache's events, which pools
// saw a pod become unschedulable, get scheduled or go while pending, or a
// node join, leave or change state. Without Config.Informers there is no
// watch and ok is false. The informers replay what they hold to a new
// handler, so notify first hears every pool with pending pods or nodes.
func (o *Observer) WatchChanges(notify func(poolID string)) (stop func(), ok bool) {
	if !o.cfg.Informers || o.validate() != nil {
		return nil, false
	}
	o.cacheOnce.Do(func() { o.cache = startInformerCache(o.client) })
	if o.cache == nil { // closed before it started
		return nil, false
	}
	podReg, err := o.cache.podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.podEvent(nil, podOf(obj), notify) },
		UpdateFunc: func(old, cur any) { o.podEvent(podOf(old), podOf(cur), notify) },
		DeleteFunc: func(obj any) { o.podEvent(podOf(obj), nil, notify) },
	})
	if err != nil {
		return nil, false
	}
	nodeReg, err := o.cache.nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.nodeEvent(nil, nodeOf(obj), notify) },
		UpdateFunc: func(old, cur any) { o.nodeEvent(nodeOf(old), nodeOf(cur), notify) },
		DeleteFunc: func(obj any) { o.nodeEvent(nodeOf(obj), nil, notify) },
	})
	if err != nil {
		_ = o.cache.podInformer.RemoveEventHandler(podReg)
		return nil, false
	}
	return func() {
		_ = o.cache.podInformer.RemoveEventHandler(podReg)
		_ = o.cache.nodeInformer.RemoveEventHandler(nodeReg)
	}, true
}

// podEvent notifies the pods' pools when pending-ness or the time since
// which the pod is unschedulable changed (nil: the pod did not exist).
func (o *Observer) podEvent(old, cur *corev1.Pod, notify func(string)) {
	wasSince, was := o.pendingSince(old)
	isSince, is := o.pendingSince(cur)
	if was == is && wasSince == isSince {
		return
	}
	for _, p := range []*corev1.Pod{old, cur} {
		if p == nil {
			continue
		}
		if key, ok := podPoolKey(p.Labels, o.cfg.Provider, o.cfg.Cluster); ok {
			notify(key.WorkflowID())
		}
	}
}

// pendingSince is when the pod became unschedulable, if it is pending
// unbound as the observer counts it.
func (o *Observer) pendingSince(p *corev1.Pod) (int64, bool) {
	if p == nil || p.Spec.NodeName != "" || isTerminal(p) || p.Status.Phase != corev1.PodPending {
		return 0, false
	}
	since, ok := unschedulableSince(p)
	return since.UnixNano(), ok
}

// nodeEvent notifies a node's pool when it joined, left or changed state.
func (o *Observer) nodeEvent(old, cur *corev1.Node, notify func(string)) {
	if old != nil && cur != nil && nodeState(old) == nodeState(cur) {
		return
	}
	for _, n := range []*corev1.Node{old, cur} {
		if n == nil {
			continue
		}
		if key, err := parsePoolLabel(n.Labels[types.LabelPool], o.cfg.Cluster); err == nil {
			notify(key.WorkflowID())
		}
	}
}

func podOf(obj any) *corev1.Pod {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, _ := obj.(*corev1.Pod)
	return p
}

func nodeOf(obj any) *corev1.Node {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	n, _ := obj.(*corev1.Node)
	return n
}
