package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

// TestInterruptedSpotNodeIsReplacedBeforeItsDeadline: on the sim, a spot
// machine warned it goes in two minutes is replaced by a new Ready node,
// drained and deleted well before the deadline, and its notice is
// acknowledged.
func TestInterruptedSpotNodeIsReplacedBeforeItsDeadline(t *testing.T) {
	sp, key := spec(starter.DemoDemand{Shape: "steady", Pods: 4, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}})
	sp.Pools[0].Policy.AllowedSizes = []string{"sim-2c4g"}
	s := testsuite.StartStack(t, sp, "")
	testsuite.WaitForPool(t, s, key, 90*time.Second, "scaled up for 4 pods", func(st contract.PoolStatus) bool {
		return st.Nodes >= 2 && st.PendingPods == 0
	})

	got := testsuite.InterruptSpotNode(t, s, key)
	d, n := got.Decision, got.Notice
	t.Logf("notice %s at %s, deadline %s; decision %+v; new node Ready %s", n.ID, n.NoticeAt.Format(time.RFC3339Nano), n.Deadline.Format(time.RFC3339Nano), d, got.NewReady.Format(time.RFC3339Nano))
	if d.Added != 1 || d.Size != "sim-2c4g" || len(d.Removed) != 1 {
		t.Fatalf("the decision did not replace one sim-2c4g and remove the interrupted node: %+v", d)
	}
	for _, step := range []string{"replaced by 1 × sim-2c4g", "drained", "deleted"} {
		if !strings.Contains(d.Outcome, step) {
			t.Errorf("outcome %q lacks %q", d.Outcome, step)
		}
	}
	if !got.NewReady.Before(n.Deadline) {
		t.Errorf("the replacement was Ready at %s, not before the deadline %s", got.NewReady, n.Deadline)
	}
	fleet := s.Fleet.Sims["sim-e2e"]
	ended := false
	for _, e := range fleet.Inventory().Ended {
		if e.Instance.ID == got.Victim {
			ended = true
			if !e.Instance.EndedAt.Before(n.Deadline) {
				t.Errorf("the interrupted machine ended at %s, not before its deadline %s", e.Instance.EndedAt, n.Deadline)
			}
		}
	}
	if !ended {
		t.Errorf("the interrupted machine %s is not among the ended", got.Victim)
	}
	// Acknowledged once recorded; the pods found room again.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		left, err := fleet.Interruptions(context.Background(), key)
		if err == nil && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notice not acknowledged: %v %v", left, err)
		}
	}
	testsuite.WaitForPool(t, s, key, 60*time.Second, "every pod placed again", func(st contract.PoolStatus) bool {
		return st.PendingPods == 0 && st.Nodes >= 2
	})
}
