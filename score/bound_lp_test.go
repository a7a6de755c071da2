package score

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

func alive(n int, r types.Resources, model string) ([]Pod, []int) {
	pods := make([]Pod, n)
	idx := make([]int, n)
	for i := range pods {
		pods[i] = Pod{Name: fmt.Sprint("p", i), Requests: r, GPUModel: model, Depart: time.Hour}
		idx[i] = i
	}
	return pods, idx
}

func TestLPBoundIsTheConfigurationOptimumAboveTheFractionalBound(t *testing.T) {
	// Five 3-core pods on the sim catalog: no size holds them for less
	// than $0.04 a pod (a sim-4c8g holds one, a sim-8c16g two, a
	// sim-16c64g five), so the LP optimum is $0.20, while the fractional
	// bound prices CPU alone ($0.154).
	pods, idx := alive(5, types.Resources{MilliCPU: 3000, Memory: 4 * types.GiB, Pods: 1}, "")
	catalog := catalogs.Sim()
	cg := newColumnGeneration(catalog)
	got := cg.need(pods, idx, catalog)
	_, frac := fractional(pods, idx, catalog)
	if math.Abs(got.hourly-0.20) > 1e-6 || frac >= got.hourly {
		t.Errorf("LP bound %.4f, fractional %.4f; want 0.2000 above the fractional", got.hourly, frac)
	}
	// Which optimal basis the simplex ends on decides the rounding: one
	// sim-16c64g, or three sim-8c16g.
	if got.integral < 0.20-1e-9 || got.integral > 0.24+1e-9 {
		t.Errorf("integral packing $%.4f, want $0.20 to $0.24", got.integral)
	}
	if cg.stats.Converged != 1 {
		t.Errorf("stats %+v: want the slice converged", cg.stats)
	}
	// The same content again is answered from the cache.
	cg.need(pods, idx, catalog)
	if cg.stats.Solved != 1 || cg.stats.Slices != 2 {
		t.Errorf("stats %+v: want one solve for two identical slices", cg.stats)
	}
}

func TestLPBoundCountsGPUDevicesPerNode(t *testing.T) {
	// Three pods of one GPU and 20 cores on 4-GPU, 48-core nodes: CPU lets
	// two on a node, so they need 1.5 nodes in the LP; the fractional
	// bound sees 60 of 48 cores (1.25 nodes) and the GPUs (0.75).
	gpu := types.InstanceType{Name: "gpu4", MilliCPU: 48000, Memory: 192 * types.GiB, GPUs: 4, GPUModel: "A10", MaxPods: 110, HourlyPrice: 8}
	cpu := types.InstanceType{Name: "cpu", MilliCPU: 4000, Memory: 8 * types.GiB, MaxPods: 110, HourlyPrice: 0.1}
	catalog := []types.InstanceType{gpu, cpu}
	pods, idx := alive(3, types.Resources{MilliCPU: 20000, Memory: 8 * types.GiB, GPUs: 1, Pods: 1}, "A10")
	cg := newColumnGeneration(catalog)
	got := cg.need(pods, idx, catalog)
	_, frac := fractional(pods, idx, catalog)
	if math.Abs(got.hourly-12) > 1e-6 || math.Abs(frac-10) > 1e-6 {
		t.Errorf("LP bound $%.4f, fractional $%.4f; want $12 and $10", got.hourly, frac)
	}
	if got.integral != 16 {
		t.Errorf("integral packing $%.2f, want two nodes ($16)", got.integral)
	}
}

// bruteForce is the cheapest integral packing of counts[i] pods of
// shapes[i], by trying every way to fill nodes one at a time (tiny
// instances only).
func bruteForce(shapes []types.Resources, counts []int, catalog []types.InstanceType) float64 {
	memo := map[string]float64{}
	var best func(left []int) float64
	best = func(left []int) float64 {
		key := fmt.Sprint(left)
		if v, ok := memo[key]; ok {
			return v
		}
		first := -1
		for i, n := range left {
			if n > 0 {
				first = i
				break
			}
		}
		if first < 0 {
			return 0
		}
		out := math.Inf(1)
		for _, t := range catalog {
			alloc := t.Allocatable()
			// Every set of pods one node takes that includes one of the
			// first shape left (some node must hold it).
			var fill func(i int, used types.Resources, take []int)
			fill = func(i int, used types.Resources, take []int) {
				if i == len(left) {
					if take[first] == 0 {
						return
					}
					rest := make([]int, len(left))
					for k := range left {
						rest[k] = left[k] - take[k]
					}
					out = min(out, t.HourlyPrice+best(rest))
					return
				}
				for n := 0; n <= left[i]; n++ {
					u := used
					for range n {
						u = u.Add(shapes[i])
					}
					if !u.Fits(alloc) {
						break
					}
					take[i] = n
					fill(i+1, u, take)
				}
				take[i] = 0
			}
			fill(0, types.Resources{}, make([]int, len(left)))
		}
		memo[key] = out
		return out
	}
	return best(counts)
}

func TestLPBoundNeverAboveTheIntegralOptimumEvenUnconverged(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	catalog := catalogs.Sim()[:4] // the CPU sizes
	for trial := range 12 {
		var shapes []types.Resources
		var counts []int
		var pods []Pod
		for range 3 {
			r := types.Resources{MilliCPU: int64(250 * (1 + rng.IntN(24))), Memory: int64(1+rng.IntN(20)) * types.GiB / 2, Pods: 1}
			n := 1 + rng.IntN(4)
			shapes, counts = append(shapes, r), append(counts, n)
			for range n {
				pods = append(pods, Pod{Name: fmt.Sprint("p", len(pods)), Requests: r, Depart: time.Hour})
			}
		}
		idx := make([]int, len(pods))
		for i := range idx {
			idx[i] = i
		}
		opt := bruteForce(shapes, counts, catalog)
		for _, iters := range []int{1, 40} {
			cg := newColumnGeneration(catalog)
			cg.maxIterations = iters
			got := cg.need(pods, idx, catalog)
			if got.hourly > opt+1e-9 {
				t.Errorf("trial %d, %d iterations: LP bound $%.4f above the integral optimum $%.4f (%v × %v)", trial, iters, got.hourly, opt, shapes, counts)
			}
			if got.integral < opt-1e-9 {
				t.Errorf("trial %d: integral packing $%.4f below the optimum $%.4f: it is not a packing", trial, got.integral, opt)
			}
		}
	}
}

func TestKnapsackIsExactOrSaysHowFarItMightBeOff(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 30 {
		var items []knapItem
		for i := range 5 {
			items = append(items, knapItem{shape: i, value: rng.Float64(), limit: 1 + rng.IntN(3),
				need: [knapDims]float64{float64(1 + rng.IntN(8)), float64(1 + rng.IntN(8)), 0, 1, 0}})
		}
		room := [knapDims]float64{10, 10, 0, 6, 0}
		// Every pattern, by brute force.
		best := 0.0
		var walk func(i int, v float64, rem [knapDims]float64)
		walk = func(i int, v float64, rem [knapDims]float64) {
			if i == len(items) {
				best = max(best, v)
				return
			}
			for n := 0; n <= items[i].limit; n++ {
				r := rem
				ok := true
				for d := range knapDims {
					r[d] -= float64(n) * items[i].need[d]
					ok = ok && r[d] >= 0
				}
				if !ok {
					break
				}
				walk(i+1, v+float64(n)*items[i].value, r)
			}
		}
		walk(0, 0, room)
		exact := solveKnapsack(items, room, 1<<20)
		if math.Abs(exact.value-best) > 1e-9 || exact.upper < best {
			t.Errorf("trial %d: value %.6f upper %.6f, brute force %.6f", trial, exact.value, exact.upper, best)
		}
		cut := solveKnapsack(items, room, 2)
		if cut.upper < best-1e-12 || cut.value > best+1e-12 {
			t.Errorf("trial %d with 2 nodes: value %.6f upper %.6f around the optimum %.6f", trial, cut.value, cut.upper, best)
		}
	}
}
