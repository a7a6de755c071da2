package kubernetes

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/visor-fleet/types"
)

// Builders for test objects: a pod starts Running and owned by a
// ReplicaSet, a node starts Ready; options change one thing each.

type podOption func(*corev1.Pod)

func newPod(namespace, name string, opts ...podOption) *corev1.Pod {
	yes := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: apitypes.UID(namespace + "-" + name + "-uid"),
			Labels: map[string]string{"app": name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: "rs-uid", Controller: &yes,
			}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func onNode(node string) podOption { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

func requesting(cpu, memory string) podOption {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}
	}
}

func ownedBy(kind string) podOption {
	return func(p *corev1.Pod) { p.OwnerReferences[0].Kind = kind }
}

func unreplicated() podOption { return func(p *corev1.Pod) { p.OwnerReferences = nil } }

func mirror() podOption {
	return func(p *corev1.Pod) {
		p.OwnerReferences = nil
		annotate(AnnotationMirror, "abc123")(p)
	}
}

func annotate(key, value string) podOption {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[key] = value
	}
}

func labelled(kv ...string) podOption {
	return func(p *corev1.Pod) {
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func tenant(org, project, service string) podOption {
	return labelled(types.LabelOrg, org, types.LabelProject, project, types.LabelService, service)
}

func phase(ph corev1.PodPhase) podOption { return func(p *corev1.Pod) { p.Status.Phase = ph } }

// unschedulable makes the pod pending with the scheduler's verdict at since.
func unschedulable(since time.Time) podOption {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(since),
		}}
	}
}

func terminating() podOption {
	return func(p *corev1.Pod) {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
}

type nodeOption func(*corev1.Node)

func newNode(name, pool string, opts ...nodeOption) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Labels:            map[string]string{LabelInstanceType: "s-4vcpu-8gb"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		},
		Spec: corev1.NodeSpec{ProviderID: "fake://" + name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
				corev1.ResourcePods: resource.MustParse("110"),
			},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	if pool != "" {
		n.Labels[types.LabelPool] = pool
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func cordoned() nodeOption { return func(n *corev1.Node) { n.Spec.Unschedulable = true } }

func notReady() nodeOption {
	return func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }
}

func deleting() nodeOption {
	return func(n *corev1.Node) {
		now := metav1.Now()
		n.DeletionTimestamp = &now
		n.Finalizers = []string{"test/keep"}
	}
}
