package testsuite

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/types"
)

// SpotInterruption is what InterruptSpotNode saw: the notice, the pool's
// decision on it, and when a new node of the pool was first seen Ready.
type SpotInterruption struct {
	Notice   connectors.Interruption
	Decision contract.DecisionRecord
	NewReady time.Time
	// Victim is the interrupted machine's instance ID.
	Victim string
}

// InterruptSpotNode marks the pool's first group spot on the sim (the
// planner does not buy spot yet), warns one of its Ready machines that it
// goes in two minutes, and waits for the pool's interruption decision and
// a new Ready node.
func InterruptSpotNode(t testing.TB, s *devstack.Stack, key types.PoolKey) SpotInterruption {
	t.Helper()
	fleet := s.Fleet.Sims[key.Cluster]
	var group connectors.NodeGroup
	for _, g := range fleet.Inventory().Groups {
		if g.Pool == key && len(g.Group.Instances) > 0 {
			group = g.Group
			break
		}
	}
	if group.ID == "" {
		t.Fatalf("pool %s has no group with machines on the sim", key.WorkflowID())
	}
	if err := fleet.MarkSpot(group.ID); err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, n := range readyNodes(t, fleet.Clientset().CoreV1().Nodes()) {
		before[n] = true
	}
	victim := group.Instances[0]
	notice, err := fleet.Interrupt(victim.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := SpotInterruption{Notice: notice, Victim: victim.ID}
	WaitForPool(t, s, key, time.Minute, "the interruption decided", func(st contract.PoolStatus) bool {
		for _, d := range st.Decisions {
			if d.Action == "interruption" && strings.Contains(d.Reason, notice.ID) {
				out.Decision = d
				return true
			}
		}
		return false
	})
	for deadline := time.Now().Add(time.Minute); out.NewReady.IsZero(); time.Sleep(100 * time.Millisecond) {
		for _, n := range readyNodes(t, fleet.Clientset().CoreV1().Nodes()) {
			if !before[n] {
				out.NewReady = time.Now()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new Ready node within a minute of the interruption: %+v", out.Decision)
		}
	}
	return out
}

type nodeLister interface {
	List(context.Context, metav1.ListOptions) (*corev1.NodeList, error)
}

func readyNodes(t testing.TB, nodes nodeLister) []string {
	t.Helper()
	l, err := nodes.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out = append(out, n.Name)
			}
		}
	}
	return out
}
