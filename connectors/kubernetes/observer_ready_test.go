package kubernetes

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// The observation carries when the Ready condition changed, for both
// False and Unknown (a node that lost contact), so the pool's NotReady
// clock starts at the failure.
func TestNodeObservationCarriesReadyTransition(t *testing.T) {
	at := time.Date(2026, 12, 4, 11, 0, 0, 0, time.UTC)
	for _, status := range []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionUnknown} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(at.Add(-time.Hour))},
			{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(at)},
		}}}
		o := nodeObservation(n, types.Resources{})
		if o.State != types.NodeNotReady || !o.ReadyChangedAt.Equal(at) {
			t.Errorf("Ready=%s: state %s, changed %s; want not-ready since %s", status, o.State, o.ReadyChangedAt, at)
		}
	}
	if o := nodeObservation(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, types.Resources{}); !o.ReadyChangedAt.IsZero() {
		t.Errorf("a node without conditions says it changed at %s", o.ReadyChangedAt)
	}
}
