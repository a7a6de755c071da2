package score

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

func simSize(t *testing.T, name string) types.InstanceType {
	t.Helper()
	for _, s := range catalogs.Sim() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no sim size %s", name)
	return types.InstanceType{}
}

// podsOn builds a cluster with one Ready node of size per entry of each,
// node k holding each[k] pods of req.
func podsOn(t *testing.T, size string, req types.Resources, each []int, notEvictable bool) *Cluster {
	t.Helper()
	var trace []Pod
	for k, n := range each {
		for j := range n {
			trace = append(trace, Pod{Name: strings.Repeat("p", k+1) + string(rune('a'+j)), Requests: req, Depart: time.Hour, NotEvictable: notEvictable})
		}
	}
	c := newCluster(trace, catalogs.Sim(), time.Minute, 100, types.DefaultPolicy())
	i := 0
	for _, n := range each {
		nd := c.addNode(simSize(t, size), 0)
		for range n {
			c.bind(i, nd)
			i++
		}
	}
	return c
}

var twoCores = types.Resources{MilliCPU: 2000, Memory: types.GiB, Pods: 1}

func karpenterWithFloor(floor int) *Karpenter {
	p := types.DefaultPolicy()
	p.MinNodes = floor
	return NewKarpenter(p, catalogs.Sim())
}

func TestKarpenterProvisionsFirstFitDecreasingOntoTheCheapestSizeThatHoldsTheClaim(t *testing.T) {
	// Three 3-core pods: one NodeClaim keeps the sizes that hold all three
	// (only sim-16c64g), where the cluster-autoscaler-like rule would buy
	// three sim-4c8g.
	req := types.Resources{MilliCPU: 3000, Memory: 4 * types.GiB, Pods: 1}
	tr := Trace{Name: "three", Pods: []Pod{
		{Name: "a", Requests: req, Arrive: 0, Depart: time.Hour},
		{Name: "b", Requests: req, Arrive: 0, Depart: time.Hour},
		{Name: "c", Requests: req, Arrive: 0, Depart: time.Hour},
	}}
	policy := types.DefaultPolicy()
	r, err := Simulate(tr, catalogs.Sim(), policy, NewKarpenter(policy, catalogs.Sim()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.NodesAdded != 1 || r.Spend.BySize["sim-16c64g"] == 0 {
		t.Fatalf("added %d nodes, by size %v; want one sim-16c64g", r.NodesAdded, r.Spend.BySize)
	}
	// The batch closes at once (no pod follows within 1 s), so the pods
	// wait the boot and at most one tick.
	for i, w := range r.Waits {
		if w < time.Minute || w > time.Minute+10*time.Second {
			t.Errorf("pod %d waited %s, want the 60 s boot and at most one 10 s tick", i, w)
		}
	}
}

func TestKarpenterBatchWindowClosesAfterOneIdleSecondOrTen(t *testing.T) {
	var trace []Pod
	// A pod every 0.5 s for 20 s: no idle second, so only the 10 s cap closes it.
	for j := range 40 {
		at := time.Duration(j) * 500 * time.Millisecond
		trace = append(trace, Pod{Name: string(rune('A'+j)) + "x", Requests: twoCores, Arrive: at, Depart: time.Hour})
	}
	c := newCluster(trace, catalogs.Sim(), time.Minute, 100, types.DefaultPolicy())
	k := karpenterWithFloor(0)
	for _, step := range []struct {
		now    time.Duration
		closed bool
	}{{5 * time.Second, false}, {9500 * time.Millisecond, false}, {10 * time.Second, true}} {
		c.now = step.now
		c.pending = nil
		for i, p := range trace {
			if p.Arrive <= c.now {
				c.pods[i] = podState{fits: true, pending: true, pendingSince: p.Arrive}
				c.pending = append(c.pending, i)
			}
		}
		if got := k.batchClosed(c); got != step.closed {
			t.Errorf("at %s: closed = %v, want %v", step.now, got, step.closed)
		}
	}
	// Two pods 3 s apart: the first one's batch closed 1 s after it.
	c = newCluster(trace[:2], catalogs.Sim(), time.Minute, 100, types.DefaultPolicy())
	c.pods[0] = podState{fits: true, pending: true, pendingSince: 0}
	c.pods[1] = podState{fits: true, pending: true, pendingSince: 3 * time.Second}
	c.pending, c.now = []int{0, 1}, 1500*time.Millisecond
	if !k.batchClosed(c) {
		t.Error("a batch followed by an idle second did not close")
	}
}

func TestKarpenterBudgetAllowsTenPercentRoundedUp(t *testing.T) {
	c := podsOn(t, "sim-8c16g", twoCores, []int{1, 1, 1, 1}, false)
	if err := karpenterWithFloor(0).Step(c); err != nil {
		t.Fatal(err)
	}
	// 10 % of 4 nodes rounds up to 1: single-node consolidation deletes one
	// node, its pod moving to a node that stays.
	if len(c.nodes) != 3 || c.stats.evictions != 1 || c.stats.stranded != 0 {
		t.Errorf("%d nodes, %d evictions (%d stranded); want 3 nodes after one deletion", len(c.nodes), c.stats.evictions, c.stats.stranded)
	}
}

func TestKarpenterMultiNodeReplacesManyByOneCheaperNode(t *testing.T) {
	c := podsOn(t, "sim-8c16g", twoCores, []int{1, 1, 1, 1}, false)
	k := karpenterWithFloor(0)
	k.BudgetPercent = 100
	if err := k.Step(c); err != nil {
		t.Fatal(err)
	}
	// All four (8 cores in all, $0.32/h) fit one sim-16c64g ($0.20/h).
	if c.Cordoned() != 4 || len(c.nodes) != 5 || c.nodes[4].t.Name != "sim-16c64g" {
		t.Fatalf("cordoned %d of %d nodes, newest %s; want four replaced by one sim-16c64g", c.Cordoned(), len(c.nodes), c.nodes[len(c.nodes)-1].t.Name)
	}
	// The old nodes stay until the new one is Ready, then drain onto it.
	c.now = time.Minute
	c.nodes[4].ready = true
	if err := c.completeReplacements(); err != nil {
		t.Fatal(err)
	}
	if len(c.nodes) != 1 || len(c.nodes[0].pods) != 4 || c.stats.stranded != 0 || c.stats.replacements != 1 {
		t.Errorf("%d nodes (%d pods on the first), %d stranded, %d replacements", len(c.nodes), len(c.nodes[0].pods), c.stats.stranded, c.stats.replacements)
	}
}

func TestKarpenterSingleNodeReplacesByAStrictlyCheaperSizeAboveTheFloor(t *testing.T) {
	small := types.Resources{MilliCPU: 1000, Memory: types.GiB, Pods: 1}
	c := podsOn(t, "sim-16c64g", small, []int{1}, false)
	// Floor 1: deleting is not allowed, replacing keeps one node.
	if err := karpenterWithFloor(1).Step(c); err != nil {
		t.Fatal(err)
	}
	if c.Cordoned() != 1 || len(c.nodes) != 2 || c.nodes[1].t.Name != "sim-2c4g" {
		t.Errorf("cordoned %d, nodes %d, newest %s; want the sim-16c64g replaced by a sim-2c4g", c.Cordoned(), len(c.nodes), c.nodes[len(c.nodes)-1].t.Name)
	}
	// A node already of the cheapest size that holds its pod stays.
	c = podsOn(t, "sim-2c4g", small, []int{1}, false)
	if err := karpenterWithFloor(1).Step(c); err != nil {
		t.Fatal(err)
	}
	if c.Cordoned() != 0 || len(c.nodes) != 1 {
		t.Errorf("a sim-2c4g was replaced by a size no cheaper: %d nodes", len(c.nodes))
	}
}

func TestKarpenterEmptinessKeepsTheFloor(t *testing.T) {
	c := podsOn(t, "sim-2c4g", twoCores, []int{0, 0, 0, 0, 0}, false)
	k := karpenterWithFloor(2)
	k.BudgetPercent = 100
	if err := k.Step(c); err != nil {
		t.Fatal(err)
	}
	if len(c.nodes) != 2 {
		t.Errorf("%d nodes left of 5 empty ones, want the floor of 2", len(c.nodes))
	}
}

func TestKarpenterLeavesNodesWithPodsThatMustNotBeEvicted(t *testing.T) {
	c := podsOn(t, "sim-8c16g", twoCores, []int{1, 1, 1, 1}, true)
	k := karpenterWithFloor(0)
	k.BudgetPercent = 100
	if err := k.Step(c); err != nil {
		t.Fatal(err)
	}
	if len(c.nodes) != 4 || c.Cordoned() != 0 || c.stats.evictions != 0 {
		t.Errorf("%d nodes, %d cordoned, %d evictions; a pod that must not be evicted pins its node", len(c.nodes), c.Cordoned(), c.stats.evictions)
	}
	if err := c.RemoveNodes([]string{c.nodes[0].name}); err == nil || !strings.Contains(err.Error(), "must not be evicted") {
		t.Errorf("removing a pinned node: err = %v", err)
	}
	// The cluster-autoscaler-like rule, with every node long unneeded,
	// leaves them too.
	ca := NewClusterAutoscaler(types.Policy{}, catalogs.Sim())
	for _, nd := range c.nodes {
		ca.unneededSince[nd.name] = c.Now().Add(-time.Hour)
	}
	if err := ca.scaleDown(c); err != nil || len(c.nodes) != 4 {
		t.Errorf("cluster-autoscaler-like: %v, %d nodes left of 4 pinned ones", err, len(c.nodes))
	}
}
