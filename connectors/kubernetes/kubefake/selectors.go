package kubefake

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// podFields are the pod fields the API server can select on (a subset of
// what it supports; asking for another one fails as it would there).
func podFields(obj runtime.Object) fields.Set {
	p := obj.(*corev1.Pod)
	return fields.Set{
		"metadata.name":            p.Name,
		"metadata.namespace":       p.Namespace,
		"spec.nodeName":            p.Spec.NodeName,
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"status.phase":             string(p.Status.Phase),
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

func nodeFields(obj runtime.Object) fields.Set {
	n := obj.(*corev1.Node)
	return fields.Set{
		"metadata.name":      n.Name,
		"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable),
	}
}

// fieldSelectingList answers list calls from the tracker, keeping only the
// items the field selector matches. Label selectors are left to the fake,
// which applies them after the reactor.
func fieldSelectingList(tracker k8stesting.ObjectTracker, kind string, fieldsOf func(runtime.Object) fields.Set) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		list, ok := action.(k8stesting.ListActionImpl)
		if !ok {
			return false, nil, nil
		}
		selector := list.GetListRestrictions().Fields
		if selector == nil || selector.Empty() {
			return false, nil, nil
		}
		for _, req := range selector.Requirements() {
			if _, ok := fieldsOf(emptyOf(kind))[req.Field]; !ok {
				return true, nil, apierrors.NewBadRequest("field label not supported for " + kind + ": " + req.Field)
			}
		}
		obj, err := tracker.List(list.GetResource(), list.GetKind(), list.GetNamespace(), list.ListOptions)
		if err != nil {
			return true, nil, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return true, nil, err
		}
		kept := items[:0]
		for _, item := range items {
			if selector.Matches(fieldsOf(item)) {
				kept = append(kept, item)
			}
		}
		if err := meta.SetList(obj, kept); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	}
}

// emptyOf gives a zero object of the kind, to learn its selectable fields.
func emptyOf(kind string) runtime.Object {
	if kind == "Node" {
		return &corev1.Node{}
	}
	return &corev1.Pod{}
}
