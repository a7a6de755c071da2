package score

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// shortTrace is two hours of bursty web pods that live long enough (mean
// 40 min) for every policy to serve them.
func shortTrace() Trace {
	return Bursty(2*time.Hour, 2, 40, time.Hour, 10*time.Minute, 40*time.Minute, 7)
}

func TestShortTraceEndToEnd(t *testing.T) {
	tr := shortTrace()
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 200
	cmp, err := Compare(tr, catalog, policy, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Runs) != 4 {
		t.Fatalf("got %d runs, want law, seed rule, cluster-autoscaler-like and karpenter-like", len(cmp.Runs))
	}
	want := tr.Fingerprint()
	if cmp.Bound.Fingerprint != want || cmp.Packing.Fingerprint != want {
		t.Errorf("bounds replayed %s / %s, want %s", cmp.Bound.Fingerprint, cmp.Packing.Fingerprint, want)
	}
	if cmp.Bound.NodeHours <= 0 || cmp.Bound.Cost <= 0 {
		t.Fatalf("lower bound is empty: %+v", cmp.Bound)
	}
	byName := map[string]Run{}
	for _, r := range cmp.Runs {
		byName[r.Policy] = r
		if r.Fingerprint != want {
			t.Errorf("%s replayed trace %s, want %s: policies must be scored on identical input", r.Policy, r.Fingerprint, want)
		}
		if len(r.Waits)+r.Unfit != len(tr.Pods) {
			t.Errorf("%s accounted for %d + %d pods, the trace has %d", r.Policy, len(r.Waits), r.Unfit, len(tr.Pods))
		}
		if cmp.Bound.NodeHours > r.NodeHours {
			t.Errorf("lower bound %.2f node-hours is above %s's %.2f", cmp.Bound.NodeHours, r.Policy, r.NodeHours)
		}
		if cmp.Bound.Cost > r.Cost {
			t.Errorf("lower bound $%.2f is above %s's $%.2f", cmp.Bound.Cost, r.Policy, r.Cost)
		}
		if cmp.LP.Cost > r.Cost {
			t.Errorf("LP bound $%.2f is above %s's $%.2f", cmp.LP.Cost, r.Policy, r.Cost)
		}
		if r.ScaleUps == 0 || r.ScaleDowns == 0 {
			t.Errorf("%s: %d scale-ups, %d scale-downs; the bursts need both", r.Policy, r.ScaleUps, r.ScaleDowns)
		}
		if r.StillPending != 0 {
			t.Errorf("%s left %d schedulable pods pending at the end", r.Policy, r.StillPending)
		}
	}
	if cmp.LP.Fingerprint != want || cmp.LP.Cost < cmp.Bound.Cost || cmp.LP.Cost > cmp.IntegralCost || cmp.IntegralCost > cmp.Packing.Cost {
		t.Errorf("LP bound (%s) $%.2f: want it between the fractional bound $%.2f and the best integral packing $%.2f, itself at most the offline packing's $%.2f",
			cmp.LP.Fingerprint, cmp.LP.Cost, cmp.Bound.Cost, cmp.IntegralCost, cmp.Packing.Cost)
	}
	if st := cmp.LP.LP; st == nil || st.Solved == 0 || st.Converged == 0 {
		t.Errorf("LP bound stats %+v: want slices solved and converged", st)
	}
	if cmp.Bound.NodeHours > cmp.Packing.NodeHours {
		t.Errorf("lower bound %.2f is above the offline packing %.2f", cmp.Bound.NodeHours, cmp.Packing.NodeHours)
	}
	if f := cmp.Fewest; f.Fingerprint != want || cmp.Bound.NodeHours > f.NodeHours || f.NodeHours > cmp.Packing.NodeHours {
		t.Errorf("nodes-first packing (%s) %.2f node-hours: want it between the lower bound %.2f and the cost-first offline packing %.2f",
			f.Fingerprint, f.NodeHours, cmp.Bound.NodeHours, cmp.Packing.NodeHours)
	}
	law := byName["visor law"]
	if law.BusyRemovals != 0 {
		t.Errorf("visor law removed %d nodes that were not idle", law.BusyRemovals)
	}
	if law.Unfit != 0 {
		t.Errorf("every synthetic pod fits a sim size, %d did not", law.Unfit)
	}
	// The seed rule and the law differ in sizing only; the law's planner
	// must not spend more than the seed's sum-of-requests rule here.
	if seed := byName["seed rule"]; law.Cost > seed.Cost {
		t.Errorf("law cost $%.2f is above the seed rule's $%.2f", law.Cost, seed.Cost)
	}
	var table strings.Builder
	if err := cmp.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"visor law", "seed rule", "cluster-autoscaler-like", "karpenter-like", "LP bound", "lower bound", "offline packing", "nodes-first packing"} {
		if !strings.Contains(table.String(), "| "+name+" |") {
			t.Errorf("table has no row for %s:\n%s", name, table.String())
		}
	}
}

func TestSimulationIsDeterministic(t *testing.T) {
	tr := shortTrace()
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	a, err := Simulate(tr, catalog, policy, NewClusterAutoscaler(policy, catalog), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(tr, catalog, policy, NewClusterAutoscaler(policy, catalog), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.NodeHours != b.NodeHours || a.Evictions != b.Evictions || a.ScaleUps != b.ScaleUps {
		t.Errorf("two runs differ: %.3f/%d/%d vs %.3f/%d/%d", a.NodeHours, a.Evictions, a.ScaleUps, b.NodeHours, b.Evictions, b.ScaleUps)
	}
}

func TestLawWaitsForThresholdAndDelay(t *testing.T) {
	// One pod too big for the two floor nodes: the law as recorded before
	// versionBatch must wait out the pending threshold, buy one node, and
	// bind the pod once it is Ready.
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	pod := Pod{Name: "big", Requests: types.Resources{MilliCPU: 6000, Memory: 8 * types.GiB, Pods: 1}, Arrive: time.Minute, Depart: 3 * time.Hour}
	tr := Trace{Name: "one", Pods: []Pod{pod}}
	rules := AllRules()
	rules.Batch = false
	law := NewLawWith("visor law", policy, catalog, rules)
	r, err := Simulate(tr, catalog, policy, law, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ScaleUps != 1 || r.NodesAdded != 1 {
		t.Fatalf("scale-ups %d, nodes added %d; want one node for one pod", r.ScaleUps, r.NodesAdded)
	}
	w := r.Waits[0]
	// Threshold 60 s, then up to one 10 s tick, then the 60 s boot.
	if w < 2*time.Minute || w > 2*time.Minute+20*time.Second {
		t.Errorf("pod waited %s, want threshold + provisioning delay (about 2m)", w)
	}
	if law.Decisions() == 0 {
		t.Error("law.Decide was never called")
	}
	// With batching the pod waits only for the next sample, the batch's
	// second and the boot: at most a 30 s sample, a tick and 60 s.
	b, err := Simulate(tr, catalog, policy, NewLaw("visor law", policy, catalog), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := b.Waits[0]; w < time.Minute || w > time.Minute+40*time.Second {
		t.Errorf("batched: pod waited %s, want the boot plus at most a sample and a tick", w)
	}
	// The new node is removed once the pod is gone and the idle window and
	// cooldowns pass; the floor of two stays.
	if r.ScaleDowns != 1 || r.BusyRemovals != 0 {
		t.Errorf("scale-downs %d, busy removals %d; want one idle removal", r.ScaleDowns, r.BusyRemovals)
	}
}

func TestUnfitPodsAreLeftOutAndReported(t *testing.T) {
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	tr := Trace{Name: "huge", Pods: []Pod{
		{Name: "huge", Requests: types.Resources{MilliCPU: 64000, Memory: types.GiB, Pods: 1}, Arrive: 0, Depart: time.Hour},
		{Name: "small", Requests: types.Resources{MilliCPU: 100, Memory: types.GiB, Pods: 1}, Arrive: 0, Depart: time.Hour},
	}}
	cmp, err := Compare(tr, catalog, policy, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cmp.Scores {
		if s.Unfit != 1 {
			t.Errorf("%s: unfit %d, want 1", s.Policy, s.Unfit)
		}
	}
	for _, r := range cmp.Runs {
		if r.NodesAdded != 0 {
			t.Errorf("%s bought %d nodes for a pod no size holds", r.Policy, r.NodesAdded)
		}
	}
}

func TestCompareRejectsABadPolicyNamingTheField(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 9
	p.MaxNodes = 3
	_, err := Compare(shortTrace(), catalogs.Sim(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "minNodes") {
		t.Fatalf("err = %v, want one naming minNodes", err)
	}
}

func TestQuantileIsNearestRank(t *testing.T) {
	s := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if q := quantile(s, 0.5); q != 5 {
		t.Errorf("p50 = %d, want 5", q)
	}
	if q := quantile(s, 0.99); q != 10 {
		t.Errorf("p99 = %d, want 10", q)
	}
	if q := quantile(nil, 0.5); q != 0 {
		t.Errorf("empty p50 = %d", q)
	}
}

// ComparePeers must judge the peer targets exactly as the full comparison
// does, without the bounds, on a delay other than the default.
func TestComparePeersJudgesAsCompareDoes(t *testing.T) {
	tr := shortTrace()
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 200
	opt := Options{ProvisioningDelay: 2 * time.Minute}
	full, err := Compare(tr, catalog, policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	peers, err := ComparePeers(tr, catalog, policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(peers.Runs) != 3 || peers.LP.Cost != 0 {
		t.Fatalf("ComparePeers ran %d policies and an LP bound of $%.2f, want the law and two peers, no bound", len(peers.Runs), peers.LP.Cost)
	}
	want := full.Targets()[1:5]
	got := peers.PeerTargets()
	if len(got) != len(want) {
		t.Fatalf("got %d peer targets, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("target %d: ComparePeers says %+v, Compare %+v", i, got[i], want[i])
		}
	}
	if got[1].Name != "p99 total pending ≤ 2m20s" {
		t.Errorf("the wait target is %q, want the given delay's 2m20s", got[1].Name)
	}
	if _, err := ComparePeers(tr, catalog, types.Policy{}, opt); err == nil {
		t.Error("a zero policy was accepted")
	}
}
