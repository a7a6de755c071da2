package score

import (
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// LowerBound is the offline yardstick: for every minute, the pods alive for
// all of that minute packed afresh onto new nodes by the real planner
// (first-fit decreasing, cheapest plan; pods one size cannot take go to
// the next plan's size), with no provisioning delay, no pending threshold
// and no cooldown, and never fewer nodes than the floor. No online policy
// knows the future or repacks running pods, so none should spend less
// while serving every pod.
func LowerBound(tr Trace, catalog []types.InstanceType, pool types.Policy, every time.Duration) Run {
	if every <= 0 {
		every = time.Minute
	}
	start := time.Now()
	fits := make([]bool, len(tr.Pods))
	for i, p := range tr.Pods {
		fits[i], _ = placeable(p, catalog)
	}
	floor := cheapestCPU(catalog)
	run := Run{Policy: "offline lower bound", Trace: tr.Name, Fingerprint: tr.Fingerprint(), Span: tr.Span()}
	var prev []int
	var nodes int
	var hourly, demand float64
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
			nodes, hourly = packFresh(tr.Pods, alive, catalog)
			if nodes < pool.MinNodes && floor.Name != "" {
				hourly += float64(pool.MinNodes-nodes) * floor.HourlyPrice
				nodes = pool.MinNodes
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
		run.Series = append(run.Series, Sample{At: t, Nodes: nodes, DemandCPU: demand, HourlyCost: hourly})
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
	pending := make([]types.PendingPod, len(idx))
	for k, i := range idx {
		pending[k] = types.PendingPod{Namespace: "trace", Name: pods[i].Name, Requests: pods[i].Requests, GPUModel: pods[i].GPUModel}
	}
	nodes, hourly := 0, 0.0
	for len(pending) > 0 {
		plan := sizing.PlanScaleUp(sizing.Request{Pending: pending, Catalog: catalog})
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
