package sizing

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// fuzzBytes turns fuzz input into a Request, mostly plausible numbers with
// the occasional extreme (negative, zero, MaxInt64) so both the packing
// and the guards get exercised.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) intn(n int) int { return int(f.byte()) % n }

// amount is a multiple of unit most of the time and an extreme otherwise.
func (f *fuzzBytes) amount(unit int64) int64 {
	switch c := f.byte(); c {
	case 250:
		return -unit
	case 251:
		return math.MaxInt64
	case 252:
		return math.MinInt64
	case 253:
		return math.MaxInt64 / 3
	case 254:
		v := int64(0)
		for range 8 {
			v = v<<8 | int64(f.byte())
		}
		return v
	default:
		return int64(c) * unit
	}
}

func (f *fuzzBytes) price() float64 {
	switch c := f.byte(); c {
	case 250:
		return -1
	case 251:
		return math.NaN()
	case 252:
		return math.Inf(1)
	case 253:
		return math.MaxFloat64
	default:
		return float64(c) / 64
	}
}

var fuzzModels = []string{"", "A10", "H100"}

func (f *fuzzBytes) request() (Request, []string) {
	var req Request
	for range f.intn(7) {
		req.Catalog = append(req.Catalog, types.InstanceType{
			Name:     fmt.Sprintf("size-%d", f.intn(6)),
			MilliCPU: f.amount(250), Memory: f.amount(256 * types.MiB),
			GPUs: int64(f.intn(3)), GPUModel: fuzzModels[f.intn(3)],
			MaxPods: f.amount(2), HourlyPrice: f.price(),
			Overhead: types.Resources{MilliCPU: f.amount(10), Memory: f.amount(16 * types.MiB), Pods: int64(f.intn(3))},
		})
	}
	for i := range f.intn(48) {
		p := types.PendingPod{
			Namespace: fmt.Sprintf("ns%d", f.intn(2)), Name: fmt.Sprintf("p%d", i),
			Requests: types.Resources{MilliCPU: f.amount(100), Memory: f.amount(64 * types.MiB), GPUs: int64(f.intn(3)) - 1 + int64(f.intn(2)), Pods: int64(f.intn(3))},
			GPUModel: fuzzModels[f.intn(3)],
		}
		if i > 0 && f.intn(8) == 0 { // an exact duplicate, key and all
			p = req.Pending[i-1]
		}
		req.Pending = append(req.Pending, p)
	}
	states := []types.NodeState{types.NodeReady, types.NodeProvisioning, types.NodeNotReady, types.NodeCordoned, types.NodeDeleting}
	for range f.intn(5) {
		req.Existing = append(req.Existing, types.NodeObservation{
			Name: fmt.Sprintf("n%d", f.intn(4)), Size: fmt.Sprintf("size-%d", f.intn(6)), State: states[f.intn(len(states))],
			Allocatable: types.Resources{MilliCPU: f.amount(250), Memory: f.amount(256 * types.MiB), GPUs: int64(f.intn(3)), Pods: f.amount(2)},
			Requested:   types.Resources{MilliCPU: f.amount(250), Memory: f.amount(256 * types.MiB), Pods: f.amount(1)},
		})
	}
	req.MaxNewNodes = f.intn(8) - 2
	var excluded []string
	if f.intn(3) == 0 {
		excluded = []string{fmt.Sprintf("size-%d", f.intn(6))}
	}
	return req, excluded
}

// FuzzPlanScaleUp: any pods, catalogs and nodes, however odd, never panic,
// never place a pod where it does not fit (checkPlan recomputes every node
// from the placements), and plan the same whatever the input order.
func FuzzPlanScaleUp(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 8, 16, 0, 0, 55, 32, 1, 2, 0, 2, 8, 16, 1, 1, 55, 64, 1, 2, 0, 10, 0, 4, 4, 0, 0, 0, 1, 4, 8, 1, 1, 1, 0, 8, 2, 1, 2, 0, 0, 0})
	f.Add([]byte{2, 0, 251, 251, 2, 1, 251, 253, 251, 251, 0, 5, 0, 0, 40, 250, 252, 2, 2, 2, 1, 0, 0, 3, 2, 252, 253, 1, 250, 254, 1, 2, 3, 4, 5, 6, 7, 8, 0})
	f.Add([]byte{6, 0, 64, 64, 0, 0, 110, 8, 1, 1, 1, 1, 128, 128, 1, 1, 110, 40, 2, 2, 0, 2, 16, 16, 2, 2, 110, 200, 0, 0, 0, 3, 4, 4, 0, 0, 9, 4, 0, 0, 0, 4, 255, 255, 0, 0, 255, 255, 0, 0, 0,
		5, 255, 255, 2, 2, 255, 250, 0, 0, 0, 47, 0, 10, 10, 1, 1, 1, 0, 1, 30, 30, 2, 1, 2, 0, 0, 4, 4, 0, 0, 0, 0})
	f.Add([]byte{1, 2, 32, 64, 0, 0, 54, 16, 0, 0, 0, 30, 1, 40, 20, 1, 0, 0, 0, 1, 0, 9, 9, 0, 0, 0, 0, 4, 0, 2, 0, 32, 64, 0, 30, 20, 10, 2, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzBytes{data}
		req, excluded := in.request()
		plan := PlanScaleUpExcluding(req, excluded)
		if err := checkPlan(req, excluded, plan); err != nil {
			t.Fatalf("%v\nrequest %+v\nplan %+v", err, req, plan)
		}
		reordered := req
		reordered.Pending = slices.Clone(req.Pending)
		reordered.Existing = slices.Clone(req.Existing)
		slices.Reverse(reordered.Pending)
		slices.Reverse(reordered.Existing)
		if again := PlanScaleUpExcluding(reordered, excluded); !reflect.DeepEqual(plan, again) {
			t.Fatalf("plan depends on input order:\n%+v\n%+v", plan, again)
		}
		_ = Baseline(req) // must not panic on the same input
	})
}
