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

// A pod arriving just after a sample: polled, the law hears of it at the
// next sample, 30 s later; watched (Options.WatchEvents), at the next
// tick, so it waits about a tick, the batch and a boot.
func TestWatchEventsWakeTheLawBeforeItsNextSample(t *testing.T) {
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	policy.MinNodes = 0
	tr := Trace{Name: "one", Pods: []Pod{
		{Name: "late", Requests: types.Resources{MilliCPU: 3000, Memory: 4 * types.GiB, Pods: 1}, Arrive: 31 * time.Second, Depart: time.Hour},
	}}
	wait := func(watch bool) time.Duration {
		r, err := Simulate(tr, catalog, policy, NewLaw("visor law", policy, catalog), Options{WatchEvents: watch})
		if err != nil {
			t.Fatal(err)
		}
		return r.Waits[0]
	}
	polled, watched := wait(false), wait(true)
	if watched > time.Minute+30*time.Second || watched+15*time.Second > polled {
		t.Fatalf("waited %s watched, %s polled; want at most 1m30s watched and 15s less than polled", watched, polled)
	}
}
