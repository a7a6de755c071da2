package score

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Offline yardsticks, each per minute over the pods alive for all of
// that minute, with no provisioning delay, no pending threshold, no
// cooldown, and never fewer nodes than the floor:
//
//   - OfflinePacking packs those pods afresh onto new nodes with the real
//     planner (first-fit decreasing, cheapest plan; pods one size cannot
//     take go to the next plan's size). A yardstick, not a bound: it is
//     a heuristic, and an online policy that buys a cheaper size for a
//     small batch can beat it on cost.
//   - NodesFirstPacking does the same with the planner buying the fewest
//     nodes: what a clairvoyant that moves every pod every minute and
//     waits for no node spends in node-hours (first-fit decreasing, so a
//     heuristic too).
//   - LowerBound is a proof: every node of size s gives at most its
//     allocatable in each dimension, so the pods need at least
//     sum over pods of min over the sizes that admit them of
//     request/allocatable nodes (and that times the price for cost), in
//     whichever dimension says most. No policy that runs every pod can
//     spend less.

// OfflinePacking is the planner's packing of the pods alive each minute.
func OfflinePacking(tr Trace, catalog []types.InstanceType, pool types.Policy, every time.Duration) Run {
	r := offline(tr, catalog, pool, every, plain(packFresh))
	r.Policy = "offline packing"
	return r
}

// NodesFirstPacking is OfflinePacking with the planner buying the fewest
// nodes (types.SizingNodes): the clairvoyant yardstick for node-hours.
func NodesFirstPacking(tr Trace, catalog []types.InstanceType, pool types.Policy, every time.Duration) Run {
	r := offline(tr, catalog, pool, every, plain(packFewest))
	r.Policy = "nodes-first packing"
	return r
}

// LowerBound is the fractional bound on nodes and cost each minute.
func LowerBound(tr Trace, catalog []types.InstanceType, pool types.Policy, every time.Duration) Run {
	r := offline(tr, catalog, pool, every, plain(fractional))
	r.Policy = "lower bound"
	return r
}

// sliceNeed is what a yardstick says one slice needs: nodes, their hourly
// cost, and (for the LP bound) the cost of an integral packing it found.
type sliceNeed struct {
	nodes            int
	hourly, integral float64
}

func plain(f func([]Pod, []int, []types.InstanceType) (int, float64)) func([]Pod, []int, []types.InstanceType) sliceNeed {
	return func(pods []Pod, idx []int, catalog []types.InstanceType) sliceNeed {
		n, h := f(pods, idx, catalog)
		return sliceNeed{nodes: n, hourly: h}
	}
}

func offline(tr Trace, catalog []types.InstanceType, pool types.Policy, every time.Duration,
	need func([]Pod, []int, []types.InstanceType) sliceNeed) Run {
	if every <= 0 {
		every = time.Minute
	}
	start := time.Now()
	fits := make([]bool, len(tr.Pods))
	for i, p := range tr.Pods {
		fits[i], _ = placeable(p, catalog)
	}
	floor := cheapestCPU(catalog)
	run := Run{Trace: tr.Name, Fingerprint: tr.Fingerprint(), Span: tr.Span()}
	var prev []int
	var nodes int
	var hourly, integral, demand float64
	for t := time.Duration(0); t < run.Span; t += every {
		var alive []int
		for i, p := range tr.Pods {
			if p.Arrive > t {
				break // pods are in arrival order
			}
			if fits[i] && p.Depart >= t+every {
				alive = append(alive, i)
			}
		}
		if prev == nil || !slices.Equal(alive, prev) {
			got := need(tr.Pods, alive, catalog)
			nodes, hourly, integral = got.nodes, got.hourly, got.integral
			if nodes < pool.MinNodes && floor.Name != "" {
				nodes = pool.MinNodes
				hourly = max(hourly, float64(pool.MinNodes)*floor.HourlyPrice)
			}
			if integral > 0 && floor.Name != "" {
				integral = max(integral, float64(pool.MinNodes)*floor.HourlyPrice)
			}
			demand = 0
			for _, i := range alive {
				demand += float64(tr.Pods[i].Requests.MilliCPU) / 1000
			}
			prev = alive
			if prev == nil {
				prev = []int{}
			}
		}
		step := min(every, run.Span-t).Hours()
		run.NodeHours += float64(nodes) * step
		run.Cost += hourly * step
		run.Series = append(run.Series, Sample{At: t, Nodes: nodes, DemandCPU: demand, HourlyCost: hourly, IntegralCost: integral})
	}
	for i := range tr.Pods {
		if !fits[i] {
			run.Unfit++
		} else {
			run.Waits = append(run.Waits, 0)
		}
	}
	run.Elapsed = time.Since(start)
	return run
}

// packFresh plans new nodes for the pods until every pod is placed or no
// plan places more, and returns the nodes and their hourly cost.
func packFresh(pods []Pod, idx []int, catalog []types.InstanceType) (int, float64) {
	return packWith(pods, idx, catalog, types.SizingCost)
}

// packFewest is packFresh with the planner buying the fewest nodes.
func packFewest(pods []Pod, idx []int, catalog []types.InstanceType) (int, float64) {
	return packWith(pods, idx, catalog, types.SizingNodes)
}

func packWith(pods []Pod, idx []int, catalog []types.InstanceType, objective string) (int, float64) {
	pending := make([]types.PendingPod, len(idx))
	for k, i := range idx {
		pending[k] = types.PendingPod{Namespace: "trace", Name: pods[i].Name, Requests: pods[i].Requests, GPUModel: pods[i].GPUModel}
	}
	nodes, hourly := 0, 0.0
	for len(pending) > 0 {
		plan := planFresh(pending, catalog, objective)
		if plan.NewNodes == 0 {
			break
		}
		nodes += plan.NewNodes
		hourly += plan.HourlyCost
		placed := make(map[string]bool, len(plan.Placements))
		for _, pl := range plan.Placements {
			if strings.HasPrefix(pl.Node, sizing.NewNodePrefix) {
				placed[pl.Pod] = true
			}
		}
		pending = slices.DeleteFunc(pending, func(p types.PendingPod) bool { return placed[p.Key()] })
	}
	return nodes, hourly
}

// fractional is the least any packing can use: per dimension, each pod
// takes at least its share of the best size that admits it.
func fractional(pods []Pod, idx []int, catalog []types.InstanceType) (int, float64) {
	dims := func(r types.Resources) [4]float64 {
		return [4]float64{float64(r.MilliCPU), float64(r.Memory), float64(r.GPUs), float64(max(r.Pods, 1))}
	}
	var nodes, cost [4]float64
	for _, i := range idx {
		p := pods[i]
		_, offGPU := placeable(p, catalog)
		want := dims(p.Requests)
		var bestN, bestC [4]float64
		for d := range bestN {
			bestN[d], bestC[d] = math.Inf(1), math.Inf(1)
		}
		for _, t := range catalog {
			if !admitsPod(p, offGPU, t) || !p.Requests.Fits(t.Allocatable()) {
				continue
			}
			have := dims(t.Allocatable())
			for d := range want {
				share := 0.0
				if want[d] > 0 {
					share = want[d] / have[d]
				}
				bestN[d] = min(bestN[d], share)
				bestC[d] = min(bestC[d], share*t.HourlyPrice)
			}
		}
		for d := range want {
			if !math.IsInf(bestN[d], 1) {
				nodes[d] += bestN[d]
				cost[d] += bestC[d]
			}
		}
	}
	n, c := 0.0, 0.0
	for d := range nodes {
		n, c = max(n, nodes[d]), max(c, cost[d])
	}
	return int(math.Ceil(n - 1e-9)), c
}
