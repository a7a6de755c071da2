package kubernetes_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
)

// eventsOn lists, as an admin, the events on the object named name in ns,
// the way `kubectl describe` finds them (by involvedObject).
func (e *env) eventsOn(ns, name string) []corev1.Event {
	e.t.Helper()
	list, err := e.admin.CoreV1().Events(ns).List(e.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// The pool's events land on the pod itself (its UID, so `kubectl describe
// pod` shows them), come from visor-fleet, and a repeat is one Event with a
// count rather than a second Event.
func TestIntegrationEventsLandOnThePodAndAggregate(t *testing.T) {
	e := newEnv(t)
	pod := e.pod("waiting", "100m", "128Mi")
	r := kubernetes.NewEventRecorder(e.connector)
	defer r.Close()
	bought := connectors.ClusterEvent{Kind: connectors.EventKindPod, Namespace: e.ns, Name: pod.Name, Type: connectors.EventNormal,
		Reason: connectors.EventTriggeredScaleUp, Message: "visor: buying 2 × sim-4c8g for this pod, pool pool/acme/web/api/sim/it, decision #12"}
	gone := connectors.ClusterEvent{Kind: connectors.EventKindPod, Namespace: e.ns, Name: "never-existed", Type: connectors.EventWarning,
		Reason: connectors.EventNotTriggerScaleUp, Message: "visor: no"}
	for range 3 {
		if err := r.RecordEvents(e.ctx, []connectors.ClusterEvent{bought, gone}); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually("one TriggeredScaleUp event with count 3", func() bool {
		got := e.eventsOn(e.ns, pod.Name)
		return len(got) == 1 && got[0].Count == 3
	})
	ev := e.eventsOn(e.ns, pod.Name)[0]
	if ev.InvolvedObject.UID != pod.UID || ev.InvolvedObject.Kind != "Pod" {
		t.Errorf("event is on %+v, want the pod %s (UID %s)", ev.InvolvedObject, pod.Name, pod.UID)
	}
	if ev.Reason != connectors.EventTriggeredScaleUp || ev.Type != corev1.EventTypeNormal || ev.Source.Component != kubernetes.EventComponent ||
		!strings.Contains(ev.Message, "decision #12") {
		t.Errorf("event = reason %q type %q source %q message %q", ev.Reason, ev.Type, ev.Source.Component, ev.Message)
	}
	if got := e.eventsOn(e.ns, "never-existed"); len(got) != 0 {
		t.Errorf("an event on a pod that does not exist was written: %+v", got)
	}
	if err := r.LastWriteError(); err != nil {
		t.Errorf("LastWriteError = %v", err)
	}
}

// A node the pool could not drain says so on the node.
func TestIntegrationDrainBlockedEventOnTheNode(t *testing.T) {
	e := newEnv(t)
	node := e.node("held", nil)
	r := kubernetes.NewEventRecorder(e.connector)
	defer r.Close()
	ev := connectors.ClusterEvent{Kind: connectors.EventKindNode, Name: node, Type: connectors.EventWarning,
		Reason: connectors.EventDisruptionBlocked, Message: "visor: pool pool/acme/web/api/sim/it could not drain this node: PodDisruptionBudget web allows no eviction"}
	if err := r.RecordEvents(e.ctx, []connectors.ClusterEvent{ev}); err != nil {
		t.Fatal(err)
	}
	e.eventually("a DisruptionBlocked event on the node", func() bool {
		got := e.eventsOn("default", node)
		return len(got) == 1 && got[0].Reason == connectors.EventDisruptionBlocked && got[0].InvolvedObject.Kind == "Node" &&
			got[0].InvolvedObject.UID == e.getNode(node).UID && got[0].Type == corev1.EventTypeWarning
	})
}
