package activities

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

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
	if len(b) > 1<<20 {
		t.Fatalf("observation is %d bytes, want far under Temporal's 2 MiB", len(b))
	}
	if len(po.PendingPods) != types.MaxPendingPods || po.Truncated != 50000-types.MaxPendingPods {
		t.Fatalf("kept %d, truncated %d", len(po.PendingPods), po.Truncated)
	}
	// The oldest are the ones kept: they are due first.
	for _, p := range po.PendingPods {
		if !p.UnschedulableSince.Before(t0.Add(types.MaxPendingPods * time.Second)) {
			t.Fatalf("kept %s, not among the oldest", p.Key())
		}
	}
}
