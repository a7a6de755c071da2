package score

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// A GPU pod and a CPU pod pending together: one plan grows one size, and
// the other pod is reported "other-size". The pool parks only pods no size
// can hold and sizes a deferred one in the very next decision, cooldown or
// not, so both wait about the threshold and a boot.
func TestOtherSizePodIsSizedByTheNextDecision(t *testing.T) {
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	tr := Trace{Name: "mixed", Pods: []Pod{
		{Name: "cpu", Requests: types.Resources{MilliCPU: 3000, Memory: 4 * types.GiB, Pods: 1}, Arrive: 0, Depart: 2 * time.Hour},
		{Name: "gpu", Requests: types.Resources{MilliCPU: 2000, Memory: 4 * types.GiB, GPUs: 1, Pods: 1}, Arrive: 0, Depart: 2 * time.Hour},
	}}
	law := NewLaw("visor law", policy, catalog)
	r, err := Simulate(tr, catalog, policy, law, Options{})
	if err != nil {
		t.Fatal(err)
	}
	limit := policy.PendingThreshold.D() + time.Minute + 30*time.Second // threshold, boot, ticks
	for i, w := range r.Waits {
		if w > limit {
			t.Errorf("pod %s waited %s, want at most %s (no cooldown for a deferred pod)", tr.Pods[i].Name, w, limit)
		}
	}
}
