package sim

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// supportedFields are the field labels the API server accepts per
// resource (a subset for pods); every resource has the metadata ones.
var supportedFields = map[string][]string{
	"pods":  {"spec.nodeName", "spec.schedulerName", "spec.serviceAccountName", "spec.restartPolicy", "status.phase", "status.nominatedNodeName"},
	"nodes": {"spec.unschedulable"},
}

func checkFieldSelector(resource string, sel fields.Selector) error {
	for _, r := range sel.Requirements() {
		ok := r.Field == "metadata.name" || r.Field == "metadata.namespace"
		for _, f := range supportedFields[resource] {
			ok = ok || r.Field == f
		}
		if !ok {
			return apierrors.NewBadRequest("field label not supported: " + r.Field)
		}
	}
	return nil
}

func objectFields(obj runtime.Object) fields.Set {
	set := fields.Set{}
	if m, err := meta.Accessor(obj); err == nil {
		set["metadata.name"], set["metadata.namespace"] = m.GetName(), m.GetNamespace()
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		set["spec.nodeName"] = o.Spec.NodeName
		set["spec.schedulerName"] = o.Spec.SchedulerName
		set["spec.serviceAccountName"] = o.Spec.ServiceAccountName
		set["spec.restartPolicy"] = string(o.Spec.RestartPolicy)
		set["status.phase"] = string(o.Status.Phase)
		set["status.nominatedNodeName"] = o.Status.NominatedNodeName
	case *corev1.Node:
		set["spec.unschedulable"] = strconv.FormatBool(o.Spec.Unschedulable)
	}
	return set
}

func empty(s interface{ Empty() bool }) bool { return s == nil || s.Empty() }

// fieldSelectorListReactor filters lists by field selector, which the fake
// ignores; the generated client filters labels afterwards.
func fieldSelectorListReactor(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		list, ok := a.(k8stesting.ListActionImpl)
		if !ok || empty(list.GetListRestrictions().Fields) {
			return false, nil, nil
		}
		sel := list.GetListRestrictions().Fields
		if err := checkFieldSelector(a.GetResource().Resource, sel); err != nil {
			return true, nil, err
		}
		obj, err := tracker.List(a.GetResource(), list.GetKind(), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return true, nil, err
		}
		kept := items[:0]
		for _, item := range items {
			if sel.Matches(objectFields(item)) {
				kept = append(kept, item)
			}
		}
		return true, obj, meta.SetList(obj, kept)
	}
}

// selectorWatchReactor filters watches by label and field selector, which
// the fake ignores. As the API server does, an object that stops matching
// is reported Deleted and one that starts matching Added.
func selectorWatchReactor(tracker k8stesting.ObjectTracker) k8stesting.WatchReactionFunc {
	return func(a k8stesting.Action) (bool, watch.Interface, error) {
		wa, ok := a.(k8stesting.WatchActionImpl)
		if !ok {
			return false, nil, nil
		}
		r := wa.GetWatchRestrictions()
		if empty(r.Labels) && empty(r.Fields) {
			return false, nil, nil
		}
		fieldSel, labelSel := r.Fields, r.Labels
		if fieldSel == nil {
			fieldSel = fields.Everything()
		}
		if labelSel == nil {
			labelSel = labels.Everything()
		}
		if err := checkFieldSelector(a.GetResource().Resource, fieldSel); err != nil {
			return true, nil, err
		}
		w, err := tracker.Watch(a.GetResource(), a.GetNamespace(), wa.ListOptions)
		if err != nil {
			return true, nil, err
		}
		matches := func(obj runtime.Object) (string, bool) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", false
			}
			return m.GetNamespace() + "/" + m.GetName(),
				labelSel.Matches(labels.Set(m.GetLabels())) && fieldSel.Matches(objectFields(obj))
		}
		inside := map[string]bool{} // only the filter goroutine touches it
		return true, watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
			default:
				return ev, true
			}
			key, ok := matches(ev.Object)
			was := inside[key]
			switch {
			case ev.Type == watch.Deleted || !ok:
				delete(inside, key)
				ev.Type = watch.Deleted
				return ev, was
			case !was:
				inside[key] = true
				ev.Type = watch.Added
			}
			return ev, true
		}), nil
	}
}
