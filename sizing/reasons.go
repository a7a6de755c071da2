package sizing

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// whyUnplaced explains why pods of shape s were left out of the plan.
func (in *input) whyUnplaced(s shape, winner *size, out *Plan) *Unplaceable {
	fitting := in.fittingSizes(in.sizes, s)
	switch {
	case len(fitting) == 0:
		if ex := in.fittingSizes(in.excluded, s); len(ex) > 0 {
			return &Unplaceable{Code: CodeOutOfCapacity, Reason: fmt.Sprintf(
				"only %s could hold it, and the provider reported insufficient capacity for them", sizeList(ex))}
		}
		admitting := in.admittingSizes(s.filter)
		if len(admitting) == 0 && len(in.sizes) > 0 {
			return &Unplaceable{Code: CodeNoFit, Reason: in.filterReason(s.filter)}
		}
		if s.allowedZones != nil {
			anyZone := s
			anyZone.allowedZones = nil
			if len(in.fittingSizes(in.sizes, anyZone)) > 0 {
				return &Unplaceable{Code: CodeNoFit, Reason: "topology spread on " + corev1.LabelTopologyZone +
					": every zone a new node could join already holds more matching pods than maxSkew allows over the emptiest zone"}
			}
		}
		return &Unplaceable{Code: CodeNoFit, Reason: noFitReason(s, admitting)}
	case in.limit < 0:
		return &Unplaceable{Code: CodeCeiling, Reason: "the pool is at its ceiling: no new node may be added"}
	case winner != nil && in.holds(winner, &s) > 0:
		return &Unplaceable{Code: CodeCeiling, Reason: fmt.Sprintf(
			"the pool's ceiling allows %d more node(s) and the plan's %d %s nodes are full",
			in.limit, out.NewNodes, winner.t.Name)}
	default:
		// Name the best-ranked alternative that would hold it.
		holder := fitting[0].t.Name
		for _, a := range out.Alternatives {
			if a.Skipped == "" && in.holds(in.sizeNamed(a.Size), &s) > 0 {
				holder = a.Size
				break
			}
		}
		grows := "no size"
		if winner != nil {
			grows = winner.t.Name
		}
		return &Unplaceable{Code: CodeOtherSize, Reason: fmt.Sprintf(
			"fits %s, but this decision grows %s; a later decision sizes for it", holder, grows)}
	}
}

func (in *input) fittingSizes(sizes []size, s shape) []size {
	var out []size
	for _, z := range sizes {
		if in.holds(&z, &s) > 0 {
			out = append(out, z)
		}
	}
	return out
}

func sizeList(sizes []size) string {
	names := make([]string, len(sizes))
	for i, z := range sizes {
		names[i] = z.t.Name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// dimension is one resource a pod asks for, for explaining misfits.
type dimension struct {
	name   string
	get    func(types.Resources) int64
	format func(int64) string
}

var dimensions = []dimension{
	{"CPU", func(r types.Resources) int64 { return r.MilliCPU }, func(v int64) string { return strconv.FormatInt(v, 10) + "m" }},
	{"memory", func(r types.Resources) int64 { return r.Memory }, formatBytes},
	{"GPUs", func(r types.Resources) int64 { return r.GPUs }, func(v int64) string { return strconv.FormatInt(v, 10) }},
	{"pod slots", func(r types.Resources) int64 { return r.Pods }, func(v int64) string { return strconv.FormatInt(v, 10) }},
	{"ephemeral-storage", func(r types.Resources) int64 { return r.EphemeralStorage }, formatBytes},
}

// noFitReason names the dimension that no allowed size can satisfy, e.g.
// "needs 40000m CPU, largest allowed size sim-16c64g allocates 15800m".
func noFitReason(s shape, sizes []size) string {
	if len(sizes) == 0 {
		return "no usable size in the catalog"
	}
	candidates := sizes
	if s.req.GPUs > 0 {
		candidates = nil
		var models []string
		for _, z := range sizes {
			if z.alloc.GPUs > 0 {
				models = append(models, cmp.Or(z.t.GPUModel, "unnamed"))
				if sameGPUModel(s.model, z.t.GPUModel) {
					candidates = append(candidates, z)
				}
			}
		}
		if len(models) == 0 {
			return fmt.Sprintf("needs %d GPU(s), no allowed size has GPUs", s.req.GPUs)
		}
		if len(candidates) == 0 {
			slices.Sort(models)
			return fmt.Sprintf("needs GPU model %s, allowed sizes offer %s", s.model, strings.Join(slices.Compact(models), ", "))
		}
	}
	for _, d := range dimensions {
		largest := candidates[0]
		for _, z := range candidates[1:] {
			if v, w := d.get(z.alloc), d.get(largest.alloc); v > w || (v == w && z.t.Name < largest.t.Name) {
				largest = z
			}
		}
		if need, have := d.get(s.req), d.get(largest.alloc); need > have {
			return fmt.Sprintf("needs %s %s, largest allowed size %s allocates %s",
				d.format(need), d.name, largest.t.Name, d.format(have))
		}
	}
	return fmt.Sprintf("needs %s at once; each alone fits some allowed size, but none allocates all of it", s.req)
}

func invalidReason(r types.Resources) string {
	return fmt.Sprintf("requests must not be negative: cpu=%dm memory=%dB gpus=%d pods=%d ephemeral-storage=%dB",
		r.MilliCPU, r.Memory, r.GPUs, r.Pods, r.EphemeralStorage)
}

// formatBytes renders memory the way people write it: 63.5Gi, 512Mi.
func formatBytes(b int64) string {
	switch {
	case b >= types.GiB:
		v := strconv.FormatFloat(float64(b)/float64(types.GiB), 'f', 2, 64)
		return strings.TrimSuffix(strings.TrimRight(v, "0"), ".") + "Gi"
	case b >= types.MiB:
		return strconv.FormatInt(b/types.MiB, 10) + "Mi"
	default:
		return strconv.FormatInt(b, 10) + "B"
	}
}
