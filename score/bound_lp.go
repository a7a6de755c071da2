package score

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/hanzoai/visor-fleet/types"
)

// LPBound is the cost bound of the configuration model per minute: the
// pods alive all that minute, grouped by shape, are covered by patterns
// (how many pods of each shape one node of a size holds, over CPU, memory,
// GPU devices, pod slots and ephemeral storage) at least as often as
// there are pods; the LP relaxation's optimum is a lower bound on any
// packing, and column generation finds it: the restricted master LP by
// gonum's simplex, new patterns by the knapsack in bound_knapsack.go.
// What it reports is always the Farley bound of the last duals, Σ d·π
// over the largest ratio of a pattern's dual value to its price (1 when
// no pattern has negative reduced cost, so the LP optimum itself once
// column generation has converged), which holds however far it got. Its
// node-hours are the fractional bound's (the LP minimizes cost). Each
// sample also carries the cheapest integral packing it found that minute
// (the last master rounded up, the uncovered rest by single-shape nodes).
func LPBound(tr Trace, catalog []types.InstanceType, pool types.Policy, every time.Duration) Run {
	cg := newColumnGeneration(catalog)
	r := offline(tr, catalog, pool, every, cg.need)
	r.Policy = "LP bound"
	st := cg.stats
	r.LP = &st
	return r
}

// LPStats say how the column generation went over a run's slices.
type LPStats struct {
	Slices, Solved, Converged int
	Iterations, Columns       int
	// IntegralCost is the cost of the best integral packing found each
	// slice (the LP's rounding, the offline packings'), over the run.
	IntegralCost float64
}

type lpShape struct {
	r      types.Resources
	model  string
	offGPU bool
}

func (s lpShape) less(o lpShape) int {
	return cmp.Or(cmp.Compare(s.r.GPUs, o.r.GPUs), cmp.Compare(s.r.MilliCPU, o.r.MilliCPU), cmp.Compare(s.r.Memory, o.r.Memory),
		cmp.Compare(s.r.Pods, o.r.Pods), cmp.Compare(s.r.EphemeralStorage, o.r.EphemeralStorage), cmp.Compare(s.model, o.model),
		cmp.Compare(fmt.Sprint(s.offGPU), fmt.Sprint(o.offGPU)))
}

func dimsOf(r types.Resources) [knapDims]float64 {
	return [knapDims]float64{float64(r.MilliCPU), float64(r.Memory), float64(r.GPUs), float64(r.Pods), float64(r.EphemeralStorage)}
}

// pattern is one column: take[shape] pods on one node of sizes[size].
type pattern struct {
	size int
	take map[lpShape]int
}

func (p pattern) key() string {
	keys := make([]lpShape, 0, len(p.take))
	for s := range p.take {
		keys = append(keys, s)
	}
	slices.SortFunc(keys, lpShape.less)
	var b strings.Builder
	fmt.Fprintf(&b, "%d", p.size)
	for _, s := range keys {
		fmt.Fprintf(&b, "|%v/%s/%v:%d", s.r, s.model, s.offGPU, p.take[s])
	}
	return b.String()
}

type columnGeneration struct {
	sizes []kSize
	// cache is each distinct slice content's result.
	cache map[string]sliceNeed
	// carried are the last slice's basic patterns, to start the next from.
	carried []pattern
	stats   LPStats
	// MaxIterations and KnapsackNodes bound the work per slice.
	maxIterations, knapsackNodes int
}

func newColumnGeneration(catalog []types.InstanceType) *columnGeneration {
	cg := &columnGeneration{cache: map[string]sliceNeed{}, maxIterations: 40, knapsackNodes: 3000}
	for _, t := range catalog {
		cg.sizes = append(cg.sizes, kSize{t, t.Allocatable()})
	}
	return cg
}

// need is the slice's LP bound (and the fractional node bound).
func (cg *columnGeneration) need(pods []Pod, idx []int, catalog []types.InstanceType) sliceNeed {
	cg.stats.Slices++
	count := map[lpShape]int{}
	for _, i := range idx {
		p := pods[i]
		_, offGPU := placeable(p, catalog)
		count[lpShape{p.Requests, p.GPUModel, offGPU}]++
	}
	shapes := make([]lpShape, 0, len(count))
	for s := range count {
		shapes = append(shapes, s)
	}
	slices.SortFunc(shapes, lpShape.less)
	var key strings.Builder
	for _, s := range shapes {
		fmt.Fprintf(&key, "%v/%s/%v:%d;", s.r, s.model, s.offGPU, count[s])
	}
	if got, ok := cg.cache[key.String()]; ok {
		return got
	}
	nodes, frac := fractional(pods, idx, catalog)
	out := sliceNeed{nodes: nodes}
	if len(shapes) > 0 {
		demand := make([]float64, len(shapes))
		for i, s := range shapes {
			demand[i] = float64(count[s])
		}
		out.hourly, out.integral = cg.solve(shapes, demand)
	}
	// Both are proofs, so the larger is: the fractional bound stands in
	// for a slice whose master LP failed.
	out.hourly = max(out.hourly, frac)
	cg.cache[key.String()] = out
	return out
}

func (cg *columnGeneration) admits(s lpShape, size int) bool {
	z := cg.sizes[size]
	return admitsPod(Pod{Requests: s.r, GPUModel: s.model}, s.offGPU, z.t) && s.r.Fits(z.alloc)
}

// most is how many pods of shape s one node of size holds, at most limit.
func (cg *columnGeneration) most(s lpShape, size int, limit int) int {
	need, room := dimsOf(s.r), dimsOf(cg.sizes[size].alloc)
	n := limit
	for d := range knapDims {
		if need[d] > 0 {
			n = min(n, int(room[d]/need[d]))
		}
	}
	return n
}

// solve runs column generation for one slice and returns its bound and
// the cost of the integral packing it rounds to.
func (cg *columnGeneration) solve(shapes []lpShape, demand []float64) (bound, integral float64) {
	cg.stats.Solved++
	m := len(shapes)
	row := make(map[lpShape]int, m)
	for i, s := range shapes {
		row[s] = i
	}
	// The first m columns are each shape alone on its cheapest size per
	// pod: a diagonal basis, feasible from the start.
	var cols []pattern
	seen := map[string]bool{}
	add := func(p pattern) {
		if k := p.key(); !seen[k] {
			seen[k] = true
			cols = append(cols, p)
		}
	}
	single := make([]pattern, m)
	for i, s := range shapes {
		best, bestRatio := -1, math.Inf(1)
		for z := range cg.sizes {
			if !cg.admits(s, z) {
				continue
			}
			n := cg.most(s, z, int(demand[i]))
			if r := cg.sizes[z].t.HourlyPrice / float64(n); n > 0 && r < bestRatio {
				best, bestRatio = z, r
			}
		}
		single[i] = pattern{size: best, take: map[lpShape]int{s: cg.most(s, best, int(demand[i]))}}
		add(single[i])
	}
	for _, p := range cg.carried {
		q := pattern{size: p.size, take: map[lpShape]int{}}
		ok := true
		for s, n := range p.take {
			i, present := row[s]
			if !present {
				ok = false
				break
			}
			q.take[s] = min(n, int(demand[i]))
		}
		if ok {
			add(q)
		}
	}
	var x []float64
	best := 0.0
	for iter := 0; iter < cg.maxIterations; iter++ {
		cg.stats.Iterations++
		var pi []float64
		var err error
		x, pi, err = cg.master(cols, row, demand)
		if err != nil {
			break
		}
		// Price every size; the Farley ratio holds for every pattern.
		theta := 1.0
		added := false
		for z := range cg.sizes {
			var items []knapItem
			for i, s := range shapes {
				if pi[i] > 1e-12 && cg.admits(s, z) {
					items = append(items, knapItem{shape: i, value: pi[i], need: dimsOf(s.r), limit: cg.most(s, z, int(demand[i]))})
				}
			}
			if len(items) == 0 {
				continue
			}
			res := solveKnapsack(items, dimsOf(cg.sizes[z].alloc), cg.knapsackNodes)
			price := cg.sizes[z].t.HourlyPrice
			theta = max(theta, res.upper/price)
			if res.value > price*(1+1e-7) {
				p := pattern{size: z, take: map[lpShape]int{}}
				for i, n := range res.take {
					p.take[shapes[i]] = n
				}
				if k := p.key(); !seen[k] {
					add(p)
					added = true
				}
			}
		}
		dual := 0.0
		for i := range demand {
			dual += demand[i] * pi[i]
		}
		best = max(best, dual/theta*(1-1e-9))
		if theta <= 1+1e-7 {
			cg.stats.Converged++
			break
		}
		if !added {
			break
		}
	}
	cg.stats.Columns += len(cols)
	integral = cg.round(cols, x, row, demand, single)
	// Start the next slice from this one's basic patterns.
	cg.carried = cg.carried[:0]
	for j, v := range x {
		if j < len(cols) && v > 1e-9 {
			cg.carried = append(cg.carried, cols[j])
		}
	}
	return best, integral
}

// master solves the restricted master LP, min Σ price·x over the columns
// with every shape covered, and returns x and the duals π ≥ 0 of the
// covering rows. The demand is perturbed a little so the optimal basis is
// the support of x, and the duals solve its equations.
func (cg *columnGeneration) master(cols []pattern, row map[lpShape]int, demand []float64) ([]float64, []float64, error) {
	m, n := len(demand), len(cols)
	a := mat.NewDense(m, n+m, nil)
	c := make([]float64, n+m)
	for j, p := range cols {
		c[j] = cg.sizes[p.size].t.HourlyPrice
		for s, k := range p.take {
			a.Set(row[s], j, float64(k))
		}
	}
	for i := range m {
		a.Set(i, n+i, -1) // surplus
	}
	b := make([]float64, m)
	for i := range b {
		b[i] = demand[i] * (1 + 1e-7*float64(i+1)/float64(m))
	}
	basis := make([]int, m)
	for i := range basis {
		basis[i] = i
	}
	_, x, err := lp.Simplex(c, a, b, 1e-10, basis)
	if err != nil {
		return nil, nil, err
	}
	var support []int
	for j, v := range x {
		if v > 1e-11 {
			support = append(support, j)
		}
	}
	if len(support) == 0 {
		return x, make([]float64, m), nil
	}
	bt := mat.NewDense(len(support), m, nil)
	cb := mat.NewVecDense(len(support), nil)
	for r, j := range support {
		for i := range m {
			bt.Set(r, i, a.At(i, j))
		}
		cb.SetVec(r, c[j])
	}
	var sol mat.VecDense
	if err := sol.SolveVec(bt, cb); err != nil {
		return nil, nil, err
	}
	pi := make([]float64, m)
	for i := range pi {
		pi[i] = max(0, sol.AtVec(i))
	}
	return x, pi, nil
}

// round is the cost of the master's solution rounded to whole nodes, with
// whatever rounding left uncovered put on single-shape nodes.
func (cg *columnGeneration) round(cols []pattern, x []float64, row map[lpShape]int, demand []float64, single []pattern) float64 {
	covered := make([]float64, len(demand))
	cost := 0.0
	for j := range cols {
		if j >= len(x) {
			break
		}
		n := math.Ceil(x[j] - 1e-6)
		if n <= 0 {
			continue
		}
		cost += n * cg.sizes[cols[j].size].t.HourlyPrice
		for s, k := range cols[j].take {
			covered[row[s]] += n * float64(k)
		}
	}
	for i, p := range single {
		if short := demand[i] - covered[i]; short > 0 {
			per := float64(p.take[cg.shapeOf(p)])
			cost += math.Ceil(short/per) * cg.sizes[p.size].t.HourlyPrice
		}
	}
	return cost
}

func (cg *columnGeneration) shapeOf(p pattern) lpShape {
	for s := range p.take {
		return s
	}
	return lpShape{}
}
