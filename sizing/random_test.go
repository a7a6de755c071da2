package sizing

import (
	"fmt"
	"math/rand/v2"

	"github.com/hanzoai/visor-fleet/types"
)

// randomRequest builds a small but varied request: catalogs real and made
// up (GPU models, big overheads, tight pod limits), pods from a few
// Deployment-like templates plus odd ones, and existing nodes in every
// state.
func randomRequest(r *rand.Rand) Request {
	var req Request
	switch r.IntN(3) {
	case 0:
		req.Catalog = flatCatalog()
	case 1:
		do := fixtureCatalog("digitalocean")
		r.Shuffle(len(do), func(i, j int) { do[i], do[j] = do[j], do[i] })
		req.Catalog = do[:3+r.IntN(10)]
	default:
		for i := range 2 + r.IntN(6) {
			cpu := int64(1+r.IntN(32)) * 1000
			mem := int64(1+r.IntN(128)) * types.GiB
			t := types.InstanceType{
				Name: fmt.Sprintf("t%d-%dc", i, cpu/1000), MilliCPU: cpu, Memory: mem,
				MaxPods:     int64(4 + r.IntN(110)),
				HourlyPrice: float64(1+r.IntN(100)) / 100 * float64(cpu/1000),
				Overhead:    types.Resources{MilliCPU: int64(r.IntN(400)), Memory: int64(r.IntN(1024)) * types.MiB, Pods: int64(r.IntN(3))},
			}
			if r.IntN(4) == 0 {
				t.GPUs = int64(1 + r.IntN(4))
				t.GPUModel = []string{"A10", "L4"}[r.IntN(2)]
			}
			req.Catalog = append(req.Catalog, t)
		}
	}

	type template struct {
		req   types.Resources
		model string
	}
	templates := make([]template, 1+r.IntN(8))
	for i := range templates {
		t := template{req: types.Resources{
			MilliCPU: int64(r.IntN(160)) * 50,
			Memory:   int64(r.IntN(256)) * 64 * types.MiB,
		}}
		if r.IntN(8) == 0 {
			t.req.GPUs = int64(1 + r.IntN(2))
			t.model = []string{"", "A10", "L4"}[r.IntN(3)]
		}
		if r.IntN(20) == 0 {
			t.req.MilliCPU *= 20 // too big for most sizes
		}
		templates[i] = t
	}
	for i := range r.IntN(121) {
		t := templates[r.IntN(len(templates))]
		req.Pending = append(req.Pending, types.PendingPod{
			Namespace: fmt.Sprintf("ns%d", r.IntN(3)), Name: fmt.Sprintf("pod-%d", i),
			Requests: t.req, GPUModel: t.model,
		})
	}

	states := []types.NodeState{types.NodeReady, types.NodeReady, types.NodeProvisioning, types.NodeNotReady, types.NodeCordoned, types.NodeDeleting}
	for i := range r.IntN(6) {
		t := req.Catalog[r.IntN(len(req.Catalog))]
		alloc := t.Allocatable()
		if r.IntN(5) == 0 {
			alloc.Pods = 0 // slots not reported
		}
		n := types.NodeObservation{
			Name: fmt.Sprintf("node-%d", i), Size: t.Name, State: states[r.IntN(len(states))],
			Allocatable: alloc,
			Requested: types.Resources{
				MilliCPU: alloc.MilliCPU * int64(r.IntN(11)) / 10,
				Memory:   alloc.Memory * int64(r.IntN(11)) / 10,
				Pods:     int64(r.IntN(20)),
			},
		}
		req.Existing = append(req.Existing, n)
	}
	switch r.IntN(6) {
	case 0:
		req.MaxNewNodes = 1 + r.IntN(5)
	case 1:
		req.MaxNewNodes = -1
	}
	return req
}

// shuffled returns req with its slices in another order.
func shuffled(r *rand.Rand, req Request) Request {
	out := req
	out.Pending = append([]types.PendingPod(nil), req.Pending...)
	out.Existing = append([]types.NodeObservation(nil), req.Existing...)
	out.Catalog = append([]types.InstanceType(nil), req.Catalog...)
	r.Shuffle(len(out.Pending), func(i, j int) { out.Pending[i], out.Pending[j] = out.Pending[j], out.Pending[i] })
	r.Shuffle(len(out.Existing), func(i, j int) { out.Existing[i], out.Existing[j] = out.Existing[j], out.Existing[i] })
	r.Shuffle(len(out.Catalog), func(i, j int) { out.Catalog[i], out.Catalog[j] = out.Catalog[j], out.Catalog[i] })
	return out
}
