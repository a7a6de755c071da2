package sizing

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/types"
)

var benchZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// benchCatalog400 is 400 sizes: 8 CPU counts × 3 memory ratios × 2
// architectures, a GPU variant for some, spread over 9 families; half name
// three zones, half none.
func benchCatalog400() []types.InstanceType {
	r := rand.New(rand.NewPCG(400, 1))
	cpus := []int64{2, 4, 8, 16, 32, 48, 64, 96}
	ratios := []int64{2, 4, 8}
	out := make([]types.InstanceType, 0, 400)
	for i := 0; len(out) < 400; i++ {
		cpu, ratio := cpus[i%len(cpus)], ratios[(i/len(cpus))%len(ratios)]
		var gpus int64
		model := ""
		if i%10 == 9 {
			gpus, model = []int64{1, 4, 8}[i%3], []string{"A10G", "L4", "H100"}[i%3]
		}
		t := CatalogRow{fmt.Sprintf("f%d.%dx%d-%d", i%9, cpu, ratio, i), fmt.Sprintf("f%d", i%9), cpu, cpu * ratio * 1024, gpus, model, 110,
			float64(cpu)*0.04 + float64(cpu*ratio)*0.005 + float64(gpus)*1.2 + r.Float64()*0.01}.
			InstanceType("2026-11", func(c, m, p int64) types.Resources {
				return StandardOverhead(c, m, DaemonAllowance{100, 256 * types.MiB, 3})
			})
		if i%2 == 0 {
			t.Arch = "arm64"
		}
		if i%4 < 2 {
			t.Zones = benchZones
		}
		out = append(out, t)
	}
	return out
}

// benchConstraint is one of a few scheduling parts people write: arch
// selectors, zone and family affinity, tolerations, self anti-affinity,
// hostname and zone spread, host ports.
func benchConstraint(r *rand.Rand, app string) *types.PodScheduling {
	s := &types.PodScheduling{Labels: map[string]string{"app": app, "tier": "backend"}}
	self := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	switch r.IntN(8) {
	case 0:
		s.NodeSelector = map[string]string{corev1.LabelArchStable: []string{"amd64", "arm64"}[r.IntN(2)]}
	case 1:
		s.NodeAffinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: benchZones[:1+r.IntN(3)]}}}}}
	case 2:
		s.NodeAffinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "family", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"f1", "f2"}},
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}}
	case 3:
		s.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	case 4:
		s.AntiAffinity = []corev1.PodAffinityTerm{{LabelSelector: self, TopologyKey: corev1.LabelHostname}}
	case 5:
		s.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1 + r.Int32N(3), TopologyKey: corev1.LabelHostname,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: self}}
	case 6:
		s.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: self}}
	case 7:
		s.HostPorts = []types.HostPort{{Port: 9000 + r.Int32N(50)}}
	}
	return s
}

// benchConstrainedPending is n pods from deployments distinct Deployments
// (Zipf replica counts), each with its own constraint; jitter > 0 makes
// every pod's requests differ as well.
func benchConstrainedPending(n, deployments int, jitter bool) []types.PendingPod {
	r := rand.New(rand.NewPCG(10, uint64(n*deployments)))
	cons := make([]*types.PodScheduling, deployments)
	reqs := make([]types.Resources, deployments)
	for d := range cons {
		cons[d] = benchConstraint(r, fmt.Sprintf("app-%d", d))
		cpu := []int64{100, 250, 500, 1000, 2000}[r.IntN(5)]
		reqs[d] = types.Resources{MilliCPU: cpu, Memory: cpu * []int64{1, 2, 4}[r.IntN(3)] * types.MiB}
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(deployments-1))
	pods := make([]types.PendingPod, n)
	for i := range pods {
		d := int(zipf.Uint64())
		req := reqs[d]
		if jitter {
			req.MilliCPU += int64(i % 997)
			req.Memory += int64(i/997) * types.MiB
		}
		pods[i] = types.PendingPod{Namespace: fmt.Sprintf("tenant-%d", d%7), Name: fmt.Sprintf("app-%d-%05x", d, i),
			Requests: req, Scheduling: cons[d]}
	}
	return pods
}

var benchTemplate = TemplateOptions{
	Labels: map[string]string{"disktype": "ssd"}, Region: "us-east-1",
	PoolLabels: types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "aws", Cluster: "east"}.NodeLabels(),
}

// unlike makes every size's room different, so no two sizes pack alike.
func unlike(catalog []types.InstanceType) []types.InstanceType {
	for i := range catalog {
		catalog[i].Memory += int64(i) * types.MiB
	}
	return catalog
}

// distinctFilters gives every pod its own node affinity (NotIn one size
// and a zone subset), so no filter evaluation is shared.
func distinctFilters(pods []types.PendingPod, catalog []types.InstanceType) []types.PendingPod {
	for i := range pods {
		s := *pods[i].Scheduling
		s.NodeAffinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpNotIn, Values: []string{catalog[i%len(catalog)].Name, fmt.Sprint(i)}}}}}}
		pods[i].Scheduling = &s
	}
	return pods
}

func BenchmarkPlanScaleUpConstrained(b *testing.B) {
	catalog := benchCatalog400()
	for _, tc := range []struct {
		name      string
		pods      []types.PendingPod
		catalog   []types.InstanceType
		objective string
	}{
		{"pods=10000/shapes<=20", benchConstrainedPending(10000, 20, false), catalog, ""},
		{"pods=10000/all-distinct", benchConstrainedPending(10000, 200, true), catalog, ""},
		// Worst cases: no two sizes pack alike; every pod its own filter too.
		{"pods=10000/all-distinct/sizes-unlike", benchConstrainedPending(10000, 200, true), unlike(benchCatalog400()), ""},
		{"pods=10000/all-distinct/filters-distinct", distinctFilters(benchConstrainedPending(10000, 200, true), catalog), catalog, ""},
		{"pods=10000/requests-only", benchPending(10000), catalog, ""},
		// The nodes objective packs every size (no cost bound prunes one).
		{"pods=10000/all-distinct/nodes-objective", benchConstrainedPending(10000, 200, true), catalog, types.SizingNodes},
	} {
		req := Request{Pending: tc.pods, Existing: benchExisting(tc.catalog), Catalog: tc.catalog, Template: benchTemplate, Objective: tc.objective}
		shapes := len(prepare(req, nil).shapes)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var plan Plan
			for b.Loop() {
				plan = PlanScaleUp(req)
			}
			b.ReportMetric(float64(plan.NewNodes), "nodes")
			b.ReportMetric(float64(shapes), "shapes")
		})
	}
}
