package sizing

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// Baseline is the HIP's original sizing rule, kept as a yardstick: sum the
// pending pods' requests, take the smallest size (catalog ordered by
// capacity) whose raw capacity fits the largest pod, and buy
// max(ceil(CPU sum / size CPU), ceil(memory sum / size memory)) nodes. It
// ignores per-node overhead, fragmentation, existing free room and
// MaxNewNodes, exactly as the seed did. GPUs are treated the way the seed
// treats CPU and memory (the largest pod's GPUs and model must fit, and
// the GPU sum adds a third ceiling) so that GPU inputs get a fair baseline.
// When no size fits the largest pod it falls back to the largest size and
// reports the pods that exceed it. It does not place pods: Placements and
// Alternatives are empty.
func Baseline(req Request) Plan {
	in := prepare(req, nil)
	var out Plan
	for _, i := range in.byKey {
		if in.podShape[i] == invalidPod {
			out.Unplaceable = append(out.Unplaceable, Unplaceable{
				Pod: in.keys[i], Code: CodeInvalidRequest, Reason: invalidReason(in.pods[i].Requests)})
		}
	}
	if len(in.shapes) == 0 {
		return out
	}
	sizes := slices.Clone(in.sizes)
	slices.SortStableFunc(sizes, func(a, b size) int {
		return cmp.Or(cmp.Compare(a.t.MilliCPU, b.t.MilliCPU), cmp.Compare(a.t.Memory, b.t.Memory),
			cmp.Compare(a.t.GPUs, b.t.GPUs), cmp.Compare(a.t.HourlyPrice, b.t.HourlyPrice), strings.Compare(a.t.Name, b.t.Name))
	})
	if len(sizes) == 0 {
		for _, s := range in.shapes {
			in.reportBaselineMisfits(&out, s, "no usable size in the catalog")
		}
		sortUnplaceable(out.Unplaceable)
		return out
	}

	var largest shape // per dimension maxima; model only if every GPU pod names the same one
	models := map[string]bool{}
	for _, s := range in.shapes {
		largest.req.MilliCPU = max(largest.req.MilliCPU, s.req.MilliCPU)
		largest.req.Memory = max(largest.req.Memory, s.req.Memory)
		largest.req.GPUs = max(largest.req.GPUs, s.req.GPUs)
		if s.req.GPUs > 0 && s.model != "" {
			models[GPUProduct(s.model)] = true
		}
	}
	chosen := sizes[len(sizes)-1]
	for _, z := range sizes {
		if rawFits(z, largest.req, models) {
			chosen = z
			break
		}
	}

	var cpu, mem, gpus int64
	for _, s := range in.shapes {
		if !rawFits(chosen, s.req, modelSet(s.model)) {
			in.reportBaselineMisfits(&out, s, fmt.Sprintf("exceeds the raw capacity of %s, the largest size", chosen.t.Name))
			continue
		}
		n := s.count()
		cpu = addSat(cpu, mulSat(s.req.MilliCPU, n))
		mem = addSat(mem, mulSat(s.req.Memory, n))
		gpus = addSat(gpus, mulSat(s.req.GPUs, n))
	}
	nodes := max(ceilDiv(cpu, chosen.t.MilliCPU), ceilDiv(mem, chosen.t.Memory), ceilDiv(gpus, chosen.t.GPUs))
	out.Size, out.NewNodes = chosen.t.Name, int(nodes)
	out.HourlyCost = float64(nodes) * chosen.t.HourlyPrice
	if nodes == 0 {
		out.Size = ""
	}
	sortUnplaceable(out.Unplaceable)
	return out
}

// rawFits is the seed's test: capacity before overhead, and the GPU model
// when the pods name exactly one.
func rawFits(z size, r types.Resources, models map[string]bool) bool {
	if r.GPUs > 0 && len(models) > 1 {
		return false
	}
	for m := range models {
		if r.GPUs > 0 && !sameGPUModel(m, z.t.GPUModel) {
			return false
		}
	}
	return r.MilliCPU <= z.t.MilliCPU && r.Memory <= z.t.Memory && r.GPUs <= z.t.GPUs
}

func modelSet(model string) map[string]bool {
	if model == "" {
		return nil
	}
	return map[string]bool{model: true}
}

func (in *input) reportBaselineMisfits(out *Plan, s shape, reason string) {
	for _, i := range in.byShape[s.first:s.end] {
		u := Unplaceable{Pod: in.keys[i], Code: CodeNoFit, Reason: reason}
		if c := in.pods[i].Count; c > 1 {
			u.Count = c
		}
		out.Unplaceable = append(out.Unplaceable, u)
	}
}

func sortUnplaceable(u []Unplaceable) {
	slices.SortStableFunc(u, func(a, b Unplaceable) int { return strings.Compare(a.Pod, b.Pod) })
}

// ceilDiv is ceil(a/b) for a >= 0; a size with none of a resource needs
// no nodes for a zero sum and can never cover a positive one.
func ceilDiv(a, b int64) int64 {
	switch {
	case a == 0:
		return 0
	case b <= 0:
		return math.MaxInt32
	}
	return (a-1)/b + 1
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, n int64) int64 {
	if n != 0 && a > math.MaxInt64/n {
		return math.MaxInt64
	}
	return a * n
}
