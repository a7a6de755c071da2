package sizing

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

// benchCatalog is 50 real sizes: the 30 AWS types (GPU ones included) and
// the first 20 DigitalOcean slugs.
func benchCatalog() []types.InstanceType {
	return append(fixtureCatalog("aws"), fixtureCatalog("digitalocean")[:20]...)
}

// benchPending draws n pods from 40 Deployment-like templates (requests as
// people write them: 100m/250m/1 CPU, 128Mi/1Gi/4Gi, memory roughly
// following CPU) with Zipf-distributed replica counts, plus about 1% GPU
// pods. Names are unique, like real pods.
func benchPending(n int) []types.PendingPod {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	cpus := []int64{50, 100, 200, 250, 500, 750, 1000, 1500, 2000, 4000, 8000}
	gibPerCore := []int64{1, 2, 4, 8}
	type template struct {
		req   types.Resources
		model string
	}
	templates := make([]template, 40)
	for i := range templates {
		cpu := cpus[r.IntN(len(cpus))]
		mem := cpu * gibPerCore[r.IntN(len(gibPerCore))] * types.GiB / 1000
		mem = max(mem/(64*types.MiB), 1) * 64 * types.MiB // round to 64Mi like a manifest would
		templates[i] = template{req: types.Resources{MilliCPU: cpu, Memory: mem}}
	}
	templates = append(templates,
		template{types.Resources{MilliCPU: 4000, Memory: 16 * types.GiB, GPUs: 1}, "A10G"},
		template{types.Resources{MilliCPU: 16000, Memory: 64 * types.GiB, GPUs: 4}, "A10G"})
	// Template i is Deployment i: its replicas share namespace, name
	// prefix and requests, as in a real cluster.
	zipf := rand.NewZipf(r, 1.2, 2, uint64(39))
	pods := make([]types.PendingPod, n)
	for i := range pods {
		d := int(zipf.Uint64())
		if r.IntN(100) == 0 {
			d = 40 + r.IntN(2)
		}
		pods[i] = types.PendingPod{
			Namespace: fmt.Sprintf("tenant-%d", d%17), Name: fmt.Sprintf("deploy-%d-7f9c4d%04x-%05x", d, r.IntN(4), r.Uint32()&0xfffff),
			Requests: templates[d].req, GPUModel: templates[d].model,
		}
	}
	return pods
}

func benchExisting(catalog []types.InstanceType) []types.NodeObservation {
	nodes := make([]types.NodeObservation, 10)
	for i := range nodes {
		t := catalog[i%8]
		a := t.Allocatable()
		nodes[i] = types.NodeObservation{
			Name: fmt.Sprintf("node-%d", i), Size: t.Name, State: types.NodeReady, Allocatable: a,
			Requested: types.Resources{MilliCPU: a.MilliCPU * 7 / 10, Memory: a.Memory * 6 / 10, Pods: a.Pods / 2},
		}
	}
	return nodes
}

func BenchmarkPlanScaleUp(b *testing.B) {
	catalog := benchCatalog()
	for _, n := range []int{100, 1000, 10000, 100000} {
		req := Request{Pending: benchPending(n), Existing: benchExisting(catalog), Catalog: catalog}
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var plan Plan
			for b.Loop() {
				plan = PlanScaleUp(req)
			}
			b.ReportMetric(float64(plan.NewNodes), "nodes")
		})
	}
}

// The seed's rule on the same input, for comparison.
func BenchmarkBaseline(b *testing.B) {
	catalog := benchCatalog()
	for _, n := range []int{10000} {
		req := Request{Pending: benchPending(n), Existing: benchExisting(catalog), Catalog: catalog}
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Baseline(req)
			}
		})
	}
}

// The worst case for shape bucketing: every pod asks for something
// different (requests jittered to the millicore and MiB), so nothing is
// shared and first fit scans open nodes pod by pod.
func BenchmarkPlanScaleUpDistinctShapes(b *testing.B) {
	catalog := benchCatalog()
	for _, n := range []int{1000, 10000} {
		r := rand.New(rand.NewPCG(7, uint64(n)))
		pending := benchPending(n)
		for i := range pending {
			if pending[i].Requests.GPUs == 0 {
				pending[i].Requests.MilliCPU += int64(r.IntN(200))
				pending[i].Requests.Memory += int64(r.IntN(512)) * types.MiB
			}
		}
		req := Request{Pending: pending, Existing: benchExisting(catalog), Catalog: catalog}
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				PlanScaleUp(req)
			}
		})
	}
}
