package kubernetes

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/hanzoai/visor-fleet/connectors"
)

// EventComponent is the source `kubectl describe` shows for the pool's events.
const EventComponent = "visor-fleet"

// EventRecorder records the pool's events through client-go's event
// recorder, as cluster-autoscaler does: the recorder's correlator
// aggregates repeats into one Event with a count and drops a flood from
// one object (its spam filter), and writes asynchronously, so recording
// never waits on the API server.
type EventRecorder struct {
	client      k8s.Interface
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	sink        *noticingSink
}

var _ connectors.EventRecorder = (*EventRecorder)(nil)

// NewEventRecorder starts a recorder writing core/v1 Events with client.
// Close stops it.
func NewEventRecorder(client k8s.Interface) *EventRecorder {
	b := record.NewBroadcaster()
	sink := &noticingSink{EventSink: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}}
	b.StartRecordingToSink(sink)
	return &EventRecorder{
		client:      client,
		broadcaster: b,
		recorder:    b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: EventComponent}),
		sink:        sink,
	}
}

// LastWriteError is the newest error writing an event, classified, or nil
// when the newest write succeeded: the recorder writes in the background,
// so a role without the events verbs shows here, not in RecordEvents.
func (r *EventRecorder) LastWriteError() error {
	r.sink.mu.Lock()
	defer r.sink.mu.Unlock()
	if r.sink.err == nil {
		return nil
	}
	return classifyError("write event", r.sink.err)
}

// noticingSink is the recorder's sink, remembering its newest outcome.
type noticingSink struct {
	record.EventSink
	mu  sync.Mutex
	err error
}

func (s *noticingSink) note(e *corev1.Event, err error) (*corev1.Event, error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	return e, err
}

func (s *noticingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	return s.note(s.EventSink.Create(e))
}

func (s *noticingSink) Update(e *corev1.Event) (*corev1.Event, error) {
	return s.note(s.EventSink.Update(e))
}

func (s *noticingSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	return s.note(s.EventSink.Patch(e, data))
}

// RecordEvents records each event on its object, looked up for its UID
// (`kubectl describe` matches events by it). An object already gone is
// skipped; at most connectors.MaxEventsPerCall are recorded.
func (r *EventRecorder) RecordEvents(ctx context.Context, events []connectors.ClusterEvent) error {
	if len(events) > connectors.MaxEventsPerCall {
		events = events[:connectors.MaxEventsPerCall]
	}
	for _, e := range events {
		ref, err := r.reference(ctx, e)
		if apierrors.IsNotFound(err) || ref == nil && err == nil {
			continue
		}
		if err != nil {
			return classifyError("record event", err)
		}
		r.recorder.Event(ref, e.Type, e.Reason, e.Message)
	}
	return nil
}

// reference finds the object an event is about. Pods are found by a list
// with a name selector: the connector may list pods, not get them.
func (r *EventRecorder) reference(ctx context.Context, e connectors.ClusterEvent) (*corev1.ObjectReference, error) {
	switch e.Kind {
	case connectors.EventKindNode:
		n, err := r.client.CoreV1().Nodes().Get(ctx, e.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: n.Name, UID: n.UID}, nil
	case connectors.EventKindPod:
		pods, err := r.client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", e.Name).String(),
		})
		if err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			if p.Name == e.Name {
				return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID}, nil
			}
		}
		return nil, nil
	}
	return nil, fmt.Errorf("event on a %q: only Pod and Node events are recorded", e.Kind)
}

// Close stops the recorder; events not yet written are dropped.
func (r *EventRecorder) Close() { r.broadcaster.Shutdown() }
