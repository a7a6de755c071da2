package law

import (
	"fmt"
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// Look-ahead sizing (sizing.Request.Expected): a scale-up chooses its
// size for the pods pending and for the demand the pool runs, which the
// next minutes' pods are like. A batch of a few large pods alone often
// packs cheapest on one node dearer per unit (three 4-CPU pods: one
// 16-CPU node beats three 8-CPU ones that hold one each); the pool's
// smaller pods that follow fill the cheaper size's room, and the dear
// node would stay for hours. The expected pods only choose the size:
// nothing is bought for them.

// maxMixShapes bounds the stand-in shapes RunningMix returns.
const maxMixShapes = 32

// ExpectedNamespace marks the stand-in pods of the demand expected.
const ExpectedNamespace = "visor:expected"

// RunningMix is the demand the pool runs, as stand-in pods: on each Ready
// node without GPUs its largest pod and, for the rest, pods of their mean
// size (the observation carries no pod list); shapes rounded up to 250m
// CPU and 256 MiB and merged, the maxMixShapes most common kept.
// GPU nodes are left out: look-ahead never sizes GPU nodes.
func RunningMix(obs *types.PoolObservation) []types.PendingPod {
	if obs == nil {
		return nil
	}
	round := func(r types.Resources) types.Resources {
		const c, m = 250, 256 * types.MiB
		return types.Resources{MilliCPU: (r.MilliCPU + c - 1) / c * c, Memory: (r.Memory + m - 1) / m * m, Pods: 1}
	}
	count := map[types.Resources]int{}
	for _, n := range obs.Nodes {
		if n.State != types.NodeReady || n.Allocatable.GPUs > 0 || n.Requested.Pods <= 0 || n.LargestPod == (types.Resources{}) {
			continue
		}
		count[round(n.LargestPod)]++
		if rest := n.Requested.Pods - 1; rest > 0 {
			r := n.Requested.Sub(n.LargestPod)
			count[round(types.Resources{MilliCPU: max(r.MilliCPU, 0) / rest, Memory: max(r.Memory, 0) / rest})] += int(rest)
		}
	}
	var out []types.PendingPod
	for r, k := range count {
		out = append(out, types.PendingPod{Namespace: ExpectedNamespace, Requests: r, Count: k})
	}
	slices.SortFunc(out, func(a, b types.PendingPod) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		if a.Requests.MilliCPU != b.Requests.MilliCPU {
			return int(a.Requests.MilliCPU - b.Requests.MilliCPU)
		}
		return int((a.Requests.Memory - b.Requests.Memory) / types.MiB)
	})
	// The most common shapes say what the pool runs; a plan over
	// thousands of shapes would cost every scale-up of a large pool.
	out = out[:min(len(out), maxMixShapes)]
	for i := range out {
		out[i].Name = fmt.Sprintf("mix-%d", i)
	}
	return out
}
