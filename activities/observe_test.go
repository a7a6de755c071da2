package activities

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

func TestPoolPartStaysUnderThePayloadLimitWithFiftyThousandPending(t *testing.T) {
	key := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var pods []types.PendingPod
	for i := 0; i < 50000; i++ {
		pods = append(pods, types.PendingPod{Namespace: "web", Name: fmt.Sprintf("api-%05d", i), Org: "acme", Project: "web", Service: "api",
			Requests: types.Resources{MilliCPU: 250, Memory: types.GiB, Pods: 1}, UnschedulableSince: t0.Add(time.Duration(i) * time.Second)})
	}
	po := PoolPart(map[string]types.PoolObservation{key.WorkflowID(): {PendingPods: pods}}, key, t0, "full-state")
	b, err := json.Marshal(po)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 256<<10 {
		t.Fatalf("observation is %d bytes, want under 256 KiB, far under Temporal's 2 MiB", len(b))
	}
	t.Logf("observe payload for 50,000 pending pods of one shape: %d bytes", len(b))
	if len(po.PendingPods) != types.MaxListedPending || po.Truncated != 0 || po.PendingCount() != 50000 {
		t.Fatalf("listed %d, truncated %d, counted %d", len(po.PendingPods), po.Truncated, po.PendingCount())
	}
	if len(po.PendingShapes) != 1 || po.PendingShapes[0].Unlisted() != 50000-types.MaxListedPending {
		t.Fatalf("shapes %+v", po.PendingShapes)
	}
	// The oldest are the ones listed: they are due first.
	for _, p := range po.PendingPods {
		if !p.UnschedulableSince.Before(t0.Add(types.MaxListedPending * time.Second)) {
			t.Fatalf("listed %s, not among the oldest", p.Key())
		}
	}
}

// Pods past the list still move the fingerprint: one more pending pod of
// a shape is a crossing even when the list is unchanged.
func TestFingerprintNoticesUnlistedPods(t *testing.T) {
	key := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	pods := func(n int) []types.PendingPod {
		var out []types.PendingPod
		for i := range n {
			out = append(out, types.PendingPod{Namespace: "web", Name: fmt.Sprintf("api-%05d", i), Requests: types.Resources{MilliCPU: 250},
				UnschedulableSince: t0.Add(time.Duration(i) * time.Second)})
		}
		return out
	}
	a := PoolPart(map[string]types.PoolObservation{key.WorkflowID(): {PendingPods: pods(3000)}}, key, t0, "crossing")
	b := PoolPart(map[string]types.PoolObservation{key.WorkflowID(): {PendingPods: pods(3001)}}, key, t0, "crossing")
	if len(a.PendingPods) != len(b.PendingPods) {
		t.Fatalf("lists differ: %d and %d", len(a.PendingPods), len(b.PendingPods))
	}
	if Fingerprint(a, contract.PoolThresholds{}) == Fingerprint(b, contract.PoolThresholds{}) {
		t.Fatal("3,000 and 3,001 pending pods give the same fingerprint")
	}
}
