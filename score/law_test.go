package score

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// A GPU pod and a CPU pod pending together: one plan grows one size, and
// the other pod is reported "other-size; a later decision sizes for it".
// The pool workflow records every reported pod as unplaceable, so the law
// (which skips those) never sizes it again while it waits. The adapter
// copies the workflow; noFitOnly shows what recording only no-fit pods
// would give. When the workflow changes, flip the first expectation.
func TestOtherSizePodIsNotSizedAgainAsTheWorkflowRecordsIt(t *testing.T) {
	catalog := sizing.SimCatalog()
	policy := types.DefaultPolicy()
	tr := Trace{Name: "mixed", Pods: []Pod{
		{Name: "cpu", Requests: types.Resources{MilliCPU: 3000, Memory: 4 * types.GiB, Pods: 1}, Arrive: 0, Depart: 2 * time.Hour},
		{Name: "gpu", Requests: types.Resources{MilliCPU: 2000, Memory: 4 * types.GiB, GPUs: 1, Pods: 1}, Arrive: 0, Depart: 2 * time.Hour},
	}}
	waits := func(noFitOnly bool) (cpu, gpu time.Duration) {
		law := NewLaw("visor law", policy, catalog)
		law.noFitOnly = noFitOnly
		r, err := Simulate(tr, catalog, policy, law, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Waits[0], r.Waits[1]
	}
	cpu, gpu := waits(false)
	if cpu > 3*time.Minute {
		t.Errorf("the first plan's pod waited %s", cpu)
	}
	if gpu < time.Hour {
		t.Errorf("as the workflow records other-size pods, the GPU pod should wait until it leaves; it waited %s", gpu)
	}
	_, gpu = waits(true)
	// Threshold, then the 5 min scale-up cooldown, then the boot.
	if limit := policy.PendingThreshold.D() + policy.ScaleUpCooldown.D() + time.Minute + 20*time.Second; gpu > limit {
		t.Errorf("recording only no-fit pods, the GPU pod waited %s, want at most %s", gpu, limit)
	}
}
