package law

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

func anyOrderNode(name, size string, cpu, memGiB int64, pods ...types.Resources) types.NodeObservation {
	n := types.NodeObservation{Name: name, Size: size, State: types.NodeReady,
		Allocatable: types.Resources{MilliCPU: cpu * 1000, Memory: memGiB * types.GiB, Pods: 110}}
	for _, p := range pods {
		n.Requested = n.Requested.Add(p)
		n.Requested.Pods++
		n.LargestPod = n.LargestPod.Max(p)
	}
	return n
}

func pod(milliCPU, memGiB int64) types.Resources {
	return types.Resources{MilliCPU: milliCPU, Memory: memGiB * types.GiB}
}

// The case the openb day showed (score, scaleDownCooldown 1m): the law
// counted a 48-CPU node's small pod on another 48-CPU node and a 16-CPU
// node's large pod on a 32-CPU node, but the scheduler bound the small
// pod on the 32-CPU node first and the large one found no room.
func TestPackAnyOrderKeepsTheNodeWhosePodAnotherMayDisplace(t *testing.T) {
	small, large := pod(8000, 30), pod(12500, 56)
	obs := &types.PoolObservation{Nodes: []types.NodeObservation{
		anyOrderNode("x", "m-8xl", 32, 128, pod(12500, 56)),
		anyOrderNode("y", "c-12xl", 48, 96, pod(32000, 48)),
		anyOrderNode("a", "c-12xl", 48, 96, small),
		anyOrderNode("b", "m-4xl", 16, 64, large),
	}}
	cands := []types.NodeObservation{obs.Nodes[2], obs.Nodes[3]}

	var before Decision
	got := packElsewhere(obs, cands, 10, true, false, false, &before)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("without the rule: removed %v, want both (the case the rule exists for)", got)
	}
	var d Decision
	got = packElsewhere(obs, cands, 10, true, false, true, &d)
	if !slices.Equal(got, []string{"a"}) {
		t.Fatalf("with the rule: removed %v, want only a", got)
	}
	if said := strings.Join(d.Skipped, "; "); !strings.Contains(said, "b: not consolidated with the others") {
		t.Errorf("skipped %q, want b named and why", said)
	}
	// Alone, b goes: its pod surely fits x.
	var alone Decision
	if got := packElsewhere(obs, cands[1:], 10, true, false, true, &alone); !slices.Equal(got, []string{"b"}) {
		t.Errorf("b alone: removed %v, want b", got)
	}
}

// Whatever the set the rule removes, no order of binding its pods and no
// choice among the nodes with room strands one: an adversary searches
// every order and choice on random small pools. Without the rule it finds
// strandings on the same pools, so the search can fail.
func TestPackAnyOrderSurvivesEveryScheduler(t *testing.T) {
	shapes := []types.Resources{pod(1000, 2), pod(2000, 4), pod(3000, 6), pod(1000, 6), pod(4000, 2), pod(500, 1)}
	rng := rand.New(rand.NewPCG(7, 43))
	strandedWithout, removedWith := 0, 0
	for trial := range 3000 {
		var nodes []types.NodeObservation
		pods := map[string][]types.Resources{}
		for i := range 3 + rng.IntN(4) {
			name := fmt.Sprintf("n%d", i)
			gpu := trial%2 == 1 && rng.IntN(2) == 0
			for range rng.IntN(3) {
				p := shapes[rng.IntN(len(shapes))]
				if gpu && rng.IntN(2) == 0 {
					p.GPUs = 1 + rng.Int64N(2)
				}
				pods[name] = append(pods[name], p)
			}
			n := anyOrderNode(name, "s", 8, 16, pods[name]...)
			if gpu {
				n.Size, n.Allocatable.GPUs = "g", 4
			}
			nodes = append(nodes, n)
		}
		obs := &types.PoolObservation{Nodes: nodes}
		for _, anyOrder := range []bool{false, true} {
			var d Decision
			removed := packElsewhere(obs, nodes, len(nodes), true, false, anyOrder, &d)
			if where, ok := strands(obs, removed, pods); ok {
				if anyOrder {
					for _, n := range nodes {
						t.Logf("%s free %s pods %v", n.Name, n.FreeRoom(), pods[n.Name])
					}
					t.Fatalf("trial %d: removing %v strands a pod: %s", trial, removed, where)
				}
				strandedWithout++
			} else if anyOrder {
				removedWith += len(removed)
			}
		}
	}
	if strandedWithout == 0 {
		t.Fatal("the adversary stranded nothing without the rule: it cannot tell the rule's work")
	}
	if removedWith == 0 {
		t.Fatal("the rule removed nothing at all")
	}
	t.Logf("without the rule %d removal sets strand a pod; with it none (%d nodes removed)", strandedWithout, removedWith)
}

// strands searches every order of binding the removed nodes' pods and
// every node with room for each that may take it (a pod asking for GPUs
// on a GPU node, a pod of a node without GPUs on a node without): ok when
// some pod finds none.
func strands(obs *types.PoolObservation, removed []string, pods map[string][]types.Resources) (string, bool) {
	var moving []types.Resources
	var offGPU []bool
	var free []types.Resources
	var gpus []int64
	var names []string
	for _, n := range obs.Nodes {
		if slices.Contains(removed, n.Name) {
			for _, p := range pods[n.Name] {
				moving, offGPU = append(moving, p), append(offGPU, n.Allocatable.GPUs == 0)
			}
			continue
		}
		free, gpus = append(free, n.FreeRoom()), append(gpus, n.Allocatable.GPUs)
		names = append(names, n.Name)
	}
	used := make([]bool, len(moving))
	var search func(left int) (string, bool)
	search = func(left int) (string, bool) {
		if left == 0 {
			return "", false
		}
		for i, p := range moving {
			if used[i] {
				continue
			}
			fits := false
			used[i] = true
			for j := range free {
				if !p.Fits(free[j]) || offGPU[i] && gpus[j] > 0 {
					continue
				}
				fits = true
				free[j] = free[j].Sub(p)
				where, ok := search(left - 1)
				free[j] = free[j].Add(p)
				if ok {
					used[i] = false
					return where, true
				}
			}
			used[i] = false
			if !fits {
				return fmt.Sprintf("pod %s finds no room on %v", p, names), true
			}
		}
		return "", false
	}
	return search(len(moving))
}

// One consolidation decision over a large pool: 1,500 nodes, a third of
// them underused with one small pod, the rest half full; with and without
// the rule.
func BenchmarkConsolidateLargePool(b *testing.B) {
	var nodes []types.NodeObservation
	for i := range 1500 {
		name := fmt.Sprintf("n%04d", i)
		if i%3 == 0 {
			nodes = append(nodes, anyOrderNode(name, "s", 8, 16, pod(1000, 2)))
			continue
		}
		nodes = append(nodes, anyOrderNode(name, "s", 8, 16, pod(2000, 4), pod(2000, 4)))
	}
	in := input(obs(t0, nodes), t0)
	in.Policy.MaxNodes = 2000
	in.Rules = AllRules()
	in.UnderusedSince = UpdateUnderusedSince(in.Policy, nil, types.PoolObservation{ObservedAt: t0.Add(-time.Hour), Nodes: nodes})
	for _, anyOrder := range []bool{false, true} {
		b.Run(fmt.Sprintf("PackAnyOrder=%v", anyOrder), func(b *testing.B) {
			in.Rules.PackAnyOrder = anyOrder
			b.ReportAllocs()
			var removed int
			for b.Loop() {
				d := Decide(in)
				removed = len(d.RemoveNodes)
			}
			b.ReportMetric(float64(removed), "removed")
		})
	}
}
