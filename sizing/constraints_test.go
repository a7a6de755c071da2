package sizing

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// constraintCatalog: a zonal amd64 size, an arm64 size without zones and a
// 4-GPU size, all with the flat catalog's overhead.
func constraintCatalog() []types.InstanceType {
	over := func(_, _, _ int64) types.Resources { o := flatCatalog()[0].Overhead; o.EphemeralStorage = 0; return o }
	zonal := CatalogRow{"c4", "c", 4, 8 * 1024, 0, "", 20, 0.10}.InstanceType("2026-11", over)
	zonal.Zones = []string{"us-east-1a", "us-east-1b"}
	arm := CatalogRow{"a4", "a", 4, 8 * 1024, 0, "", 20, 0.12}.InstanceType("2026-11", over)
	arm.Arch = "arm64"
	gpu := CatalogRow{"g4", "g", 16, 64 * 1024, 4, "A10G", 20, 2.00}.InstanceType("2026-11", over)
	return []types.InstanceType{zonal, arm, gpu}
}

var constraintTemplate = TemplateOptions{
	Labels: map[string]string{"disktype": "ssd", "generation": "7"},
	Region: "us-east-1",
}

// constrained is n pods of 500m/512Mi named <name>-<i> with one scheduling part.
func constrained(name string, n int, s *types.PodScheduling) []types.PendingPod {
	out := pods(name, n, 500, 512*types.MiB)
	for i := range out {
		out[i].Scheduling = s
	}
	return out
}

func affinity(reqs ...corev1.NodeSelectorRequirement) *types.PodScheduling {
	return &types.PodScheduling{NodeAffinity: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
}

func requirement(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func appLabels(app string) map[string]string { return map[string]string{"app": app} }

func selectApp(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: appLabels(app)}
}

func TestNodeFiltersAgainstTemplates(t *testing.T) {
	taint := types.Taint{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}
	tainted := constraintTemplate
	tainted.Taints = []types.Taint{taint}
	tolerate := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
	zone := corev1.LabelTopologyZone
	tests := []struct {
		name     string
		pods     []types.PendingPod
		template TemplateOptions
		// wantSize is the size bought when the pod fits; wantReason the
		// exact CodeNoFit reason when it fits none.
		wantSize, wantReason string
	}{
		{name: "nodeSelector on a declared label", pods: constrained("p", 1, &types.PodScheduling{NodeSelector: map[string]string{"disktype": "ssd"}}), wantSize: "c4"},
		{name: "nodeSelector no size carries", pods: constrained("p", 1, &types.PodScheduling{NodeSelector: map[string]string{"disktype": "ssd", "tier": "gold"}}),
			wantReason: "nodeSelector tier=gold: no size in this pool has that label"},
		{name: "nodeSelector on the architecture", pods: constrained("p", 1, &types.PodScheduling{NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"}}), wantSize: "a4"},
		{name: "nodeSelector on an architecture nobody offers", pods: constrained("p", 1, &types.PodScheduling{NodeSelector: map[string]string{corev1.LabelArchStable: "s390x"}}),
			wantReason: "nodeSelector kubernetes.io/arch=s390x: no size in this pool has that label"},
		{name: "nodeSelector on the GPU product", pods: []types.PendingPod{{Namespace: "app", Name: "g", Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, GPUs: 1},
			Scheduling: &types.PodScheduling{NodeSelector: map[string]string{LabelGPUProduct: "NVIDIA-A10G"}}}}, wantSize: "g4"},
		{name: "nodeSelector on the GPU's short model, which GFD never labels", pods: []types.PendingPod{{Namespace: "app", Name: "g", Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB, GPUs: 1},
			Scheduling: &types.PodScheduling{NodeSelector: map[string]string{LabelGPUProduct: "A10G"}}}},
			wantReason: "nodeSelector nvidia.com/gpu.product=A10G: no size in this pool has that label (GPU feature discovery labels g4 nodes nvidia.com/gpu.product=NVIDIA-A10G)"},
		{name: "affinity In a zone", pods: constrained("p", 1, affinity(requirement(zone, corev1.NodeSelectorOpIn, "us-east-1b"))), wantSize: "c4"},
		{name: "affinity In a zone nobody offers", pods: constrained("p", 1, affinity(requirement(zone, corev1.NodeSelectorOpIn, "eu-west-1a"))),
			wantReason: "required node affinity topology.kubernetes.io/zone In [eu-west-1a]: no size in this pool matches it"},
		{name: "affinity NotIn", pods: constrained("p", 1, affinity(requirement("disktype", corev1.NodeSelectorOpNotIn, "hdd"))), wantSize: "c4"},
		{name: "affinity NotIn every value", pods: constrained("p", 1, affinity(requirement("disktype", corev1.NodeSelectorOpNotIn, "ssd"))),
			wantReason: "required node affinity disktype NotIn [ssd]: no size in this pool matches it"},
		{name: "affinity Exists", pods: constrained("p", 1, affinity(requirement(zone, corev1.NodeSelectorOpExists))), wantSize: "c4"},
		{name: "affinity Exists on a missing label", pods: constrained("p", 1, affinity(requirement("fpga", corev1.NodeSelectorOpExists))),
			wantReason: "required node affinity fpga Exists: no size in this pool matches it"},
		{name: "affinity DoesNotExist", pods: constrained("p", 1, affinity(requirement(zone, corev1.NodeSelectorOpDoesNotExist))), wantSize: "a4"},
		{name: "affinity DoesNotExist on a label every size has", pods: constrained("p", 1, affinity(requirement("disktype", corev1.NodeSelectorOpDoesNotExist))),
			wantReason: "required node affinity disktype DoesNotExist: no size in this pool matches it"},
		{name: "affinity Gt", pods: constrained("p", 1, affinity(requirement("generation", corev1.NodeSelectorOpGt, "5"))), wantSize: "c4"},
		{name: "affinity Gt above every size", pods: constrained("p", 1, affinity(requirement("generation", corev1.NodeSelectorOpGt, "7"))),
			wantReason: "required node affinity generation Gt [7]: no size in this pool matches it"},
		{name: "affinity Lt", pods: constrained("p", 1, affinity(requirement("generation", corev1.NodeSelectorOpLt, "8"))), wantSize: "c4"},
		{name: "affinity Lt below every size", pods: constrained("p", 1, affinity(requirement("generation", corev1.NodeSelectorOpLt, "3"))),
			wantReason: "required node affinity generation Lt [3]: no size in this pool matches it"},
		{name: "affinity terms are ORed", pods: constrained("p", 1, &types.PodScheduling{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{requirement("fpga", corev1.NodeSelectorOpExists)}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{requirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64")}},
		}}}), wantSize: "a4"},
		{name: "affinity on a node field", pods: constrained("p", 1, &types.PodScheduling{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchFields: []corev1.NodeSelectorRequirement{requirement("metadata.name", corev1.NodeSelectorOpIn, "node-7")}}}}}),
			wantReason: "required node affinity metadata.name In [node-7]: no size in this pool matches it"},
		{name: "an invalid affinity says so", pods: constrained("p", 1, affinity(requirement("generation", corev1.NodeSelectorOpGt, "seven"))),
			wantReason: "required node affinity is invalid: nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"seven\": for 'Gt', 'Lt' operators, the value must be an integer"},
		{name: "toleration for the pool's taint", pods: constrained("p", 1, &types.PodScheduling{Tolerations: tolerate}), template: tainted, wantSize: "c4"},
		{name: "no toleration for the pool's taint", pods: pods("p", 1, 500, 512*types.MiB), template: tainted,
			wantReason: "untolerated taint dedicated=ml:NoSchedule on every size"},
		{name: "toleration of another value", pods: constrained("p", 1, &types.PodScheduling{Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}}}),
			template: tainted, wantReason: "untolerated taint dedicated=ml:NoSchedule on every size"},
		{name: "a PreferNoSchedule taint does not repel", pods: pods("p", 1, 500, 512*types.MiB),
			template: TemplateOptions{Taints: []types.Taint{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}}, wantSize: "c4"},
		{name: "each constraint alone fits some size, together none", pods: constrained("p", 1, &types.PodScheduling{
			NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"},
			NodeAffinity: affinity(requirement(zone, corev1.NodeSelectorOpExists)).NodeAffinity}),
			wantReason: "nodeSelector, required node affinity and tolerations together: no size in this pool satisfies all of them"},
		{name: "more GPUs than any size has", pods: []types.PendingPod{gpuPod("g", 8, "")},
			wantReason: "needs 8 GPUs, largest allowed size g4 allocates 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			template := tc.template
			if template.Labels == nil {
				template.Labels = constraintTemplate.Labels
			}
			p := PlanScaleUp(Request{Pending: tc.pods, Catalog: constraintCatalog(), Template: template})
			if tc.wantReason == "" {
				if p.Size != tc.wantSize || len(p.Unplaceable) != 0 {
					t.Fatalf("want every pod on %s, got size %q, unplaceable %+v", tc.wantSize, p.Size, p.Unplaceable)
				}
				return
			}
			if p.NewNodes != 0 || len(p.Unplaceable) != len(tc.pods) {
				t.Fatalf("want nothing bought and every pod unplaceable, got %d × %q, unplaceable %+v", p.NewNodes, p.Size, p.Unplaceable)
			}
			for _, u := range p.Unplaceable {
				if u.Code != CodeNoFit || u.Reason != tc.wantReason {
					t.Errorf("%s: got %s %q, want %s %q", u.Pod, u.Code, u.Reason, CodeNoFit, tc.wantReason)
				}
			}
		})
	}
}

// nodesOf maps each new node to the pods placed on it.
func nodesOf(p Plan) map[string][]string {
	out := map[string][]string{}
	for _, pl := range p.Placements {
		out[pl.Node] = append(out[pl.Node], pl.Pod)
	}
	return out
}

func TestPodToPodRules(t *testing.T) {
	web := func(name string, n int, cpu int64, s types.PodScheduling) []types.PendingPod {
		out := pods(name, n, cpu, 256*types.MiB)
		for i := range out {
			s := s
			if s.Labels == nil {
				s.Labels = appLabels("web")
			}
			out[i].Scheduling = &s
		}
		return out
	}
	antiWeb := []corev1.PodAffinityTerm{{LabelSelector: selectApp("web"), TopologyKey: corev1.LabelHostname}}
	spread := func(key string, skew int32) []corev1.TopologySpreadConstraint {
		return []corev1.TopologySpreadConstraint{{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selectApp("web")}}
	}
	zonalOnly := []types.InstanceType{constraintCatalog()[0]}
	armOnly := []types.InstanceType{constraintCatalog()[1]}
	tests := []struct {
		name    string
		pods    []types.PendingPod
		catalog []types.InstanceType
		// wantNodes is how many new nodes; every test packs pods that would
		// all fit on one node without the rule.
		wantNodes int
		// apart lists pod-name prefixes no two of whose pods may share a node.
		apart []string
	}{
		{name: "without rules the pods share one node", pods: web("w", 4, 500, types.PodScheduling{}), catalog: zonalOnly, wantNodes: 1},
		{name: "a host port takes one pod per node", pods: web("w", 3, 500, types.PodScheduling{HostPorts: []types.HostPort{{Port: 8080}}}),
			catalog: zonalOnly, wantNodes: 3, apart: []string{"app/w-"}},
		{name: "different host ports share a node", pods: concat(
			web("a", 1, 500, types.PodScheduling{HostPorts: []types.HostPort{{Port: 8080}}}),
			web("b", 1, 400, types.PodScheduling{HostPorts: []types.HostPort{{Port: 9090}}})), catalog: zonalOnly, wantNodes: 1},
		{name: "shapes sharing a host port never share a node", pods: concat(
			web("a", 1, 500, types.PodScheduling{HostPorts: []types.HostPort{{Port: 8080}}}),
			web("b", 1, 400, types.PodScheduling{HostPorts: []types.HostPort{{Port: 8080, Protocol: corev1.ProtocolTCP}}})),
			catalog: zonalOnly, wantNodes: 2, apart: []string{"app/"}},
		{name: "the same port on another protocol shares", pods: concat(
			web("a", 1, 500, types.PodScheduling{HostPorts: []types.HostPort{{Port: 53}}}),
			web("b", 1, 400, types.PodScheduling{HostPorts: []types.HostPort{{Port: 53, Protocol: corev1.ProtocolUDP}}})), catalog: zonalOnly, wantNodes: 1},
		{name: "anti-affinity to its own app spreads replicas", pods: web("w", 3, 500, types.PodScheduling{AntiAffinity: antiWeb}),
			catalog: zonalOnly, wantNodes: 3, apart: []string{"app/w-"}},
		{name: "anti-affinity to another app keeps off its nodes", pods: concat(
			web("w", 2, 500, types.PodScheduling{}),
			web("db", 1, 700, types.PodScheduling{Labels: appLabels("db"), AntiAffinity: antiWeb})),
			catalog: zonalOnly, wantNodes: 2},
		{name: "anti-affinity on a zone key is not modelled as hostname", pods: web("w", 3, 500, types.PodScheduling{
			AntiAffinity: []corev1.PodAffinityTerm{{LabelSelector: selectApp("other"), TopologyKey: corev1.LabelTopologyZone}}}),
			catalog: zonalOnly, wantNodes: 1},
		{name: "hostname spread caps a node at maxSkew", pods: web("w", 6, 500, types.PodScheduling{TopologySpread: spread(corev1.LabelHostname, 2)}),
			catalog: zonalOnly, wantNodes: 3},
		{name: "ScheduleAnyway spread does not cap", pods: web("w", 6, 500, types.PodScheduling{TopologySpread: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selectApp("web")}}}),
			catalog: zonalOnly, wantNodes: 1},
		{name: "zone spread needs a node per zone", pods: web("w", 4, 500, types.PodScheduling{TopologySpread: spread(corev1.LabelTopologyZone, 1)}),
			catalog: zonalOnly, wantNodes: 2},
		{name: "zone spread on a size without zones is one zone", pods: web("w", 4, 500, types.PodScheduling{TopologySpread: spread(corev1.LabelTopologyZone, 1)}),
			catalog: armOnly, wantNodes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanScaleUp(Request{Pending: tc.pods, Catalog: tc.catalog})
			if len(p.Unplaceable) != 0 || p.NewNodes != tc.wantNodes {
				t.Fatalf("want %d new nodes and every pod placed, got %d, unplaceable %+v", tc.wantNodes, p.NewNodes, p.Unplaceable)
			}
			for node, on := range nodesOf(p) {
				for _, prefix := range tc.apart {
					n := 0
					for _, pod := range on {
						if strings.HasPrefix(pod, prefix) {
							n++
						}
					}
					if n > 1 {
						t.Errorf("%s holds %d pods %s*: %v", node, n, prefix, on)
					}
				}
			}
		})
	}
}

func TestIsolatedShapeSharesNoNode(t *testing.T) {
	// db repels web; small fillers would fit beside either.
	anti := []corev1.PodAffinityTerm{{LabelSelector: selectApp("web"), TopologyKey: corev1.LabelHostname}}
	pending := concat(pods("filler", 4, 100, 128*types.MiB),
		constrained("db", 1, &types.PodScheduling{Labels: appLabels("db"), AntiAffinity: anti}),
		constrained("web", 2, &types.PodScheduling{Labels: appLabels("web")}))
	p := PlanScaleUp(Request{Pending: pending, Catalog: constraintCatalog()[:1]})
	if len(p.Unplaceable) != 0 {
		t.Fatalf("unplaceable %+v", p.Unplaceable)
	}
	for node, on := range nodesOf(p) {
		hasDB := false
		for _, pod := range on {
			hasDB = hasDB || strings.HasPrefix(pod, "app/db-")
		}
		if hasDB && len(on) != 1 {
			t.Errorf("the db pod shares %s with %v", node, on)
		}
	}
}

func TestExistingNodesAreFiltered(t *testing.T) {
	c4 := constraintCatalog()[0]
	alloc := c4.Allocatable()
	ssd := &types.PodScheduling{NodeSelector: map[string]string{"disktype": "ssd"}}
	tests := []struct {
		name   string
		node   types.NodeObservation
		wantOn string // "" means a new node is bought
	}{
		{name: "a booting node not yet registered is judged by its size's template",
			node: node("boot", "c4", types.NodeProvisioning, alloc, types.Resources{}), wantOn: "existing:boot"},
		{name: "a registered node's own labels count, startup taints do not",
			node: types.NodeObservation{Name: "up", Size: "c4", State: types.NodeReady, Allocatable: alloc,
				Labels: map[string]string{"disktype": "ssd"},
				Taints: []types.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}},
			wantOn: "existing:up"},
		{name: "a registered node without the label does not take the pod",
			node: types.NodeObservation{Name: "hdd", Size: "c4", State: types.NodeReady, Allocatable: alloc,
				Labels: map[string]string{"disktype": "hdd"}}},
		{name: "a lasting taint on a registered node repels the pod",
			node: types.NodeObservation{Name: "tainted", Size: "c4", State: types.NodeReady, Allocatable: alloc,
				Labels: map[string]string{"disktype": "ssd"},
				Taints: []types.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanScaleUp(Request{Pending: constrained("p", 1, ssd), Existing: []types.NodeObservation{tc.node},
				Catalog: []types.InstanceType{c4}, Template: constraintTemplate})
			if len(p.Placements) != 1 {
				t.Fatalf("placements %+v, unplaceable %+v", p.Placements, p.Unplaceable)
			}
			if tc.wantOn != "" && (p.Placements[0].Node != tc.wantOn || p.NewNodes != 0) {
				t.Fatalf("want the pod on %s and nothing bought, got %s and %d new", tc.wantOn, p.Placements[0].Node, p.NewNodes)
			}
			if tc.wantOn == "" && (p.Placements[0].Node != "new:0" || p.NewNodes != 1) {
				t.Fatalf("want one new node, got %s and %d new", p.Placements[0].Node, p.NewNodes)
			}
		})
	}
}

func TestUnplacedOnThisSizeIsOtherSizeNotNoFit(t *testing.T) {
	// The arm pod and the amd64 pods cannot share a size: the plan grows one
	// and the other is sized by the next decision.
	pending := concat(constrained("x86", 6, &types.PodScheduling{NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"}}),
		constrained("arm", 1, &types.PodScheduling{NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"}}))
	p := PlanScaleUp(Request{Pending: pending, Catalog: constraintCatalog()[:2]})
	if p.Size != "c4" || len(p.Unplaceable) != 1 {
		t.Fatalf("want c4 grown and the arm pod left, got %q and %+v", p.Size, p.Unplaceable)
	}
	if u := p.Unplaceable[0]; u.Code != CodeOtherSize || u.Reason != "fits a4, but this decision grows c4; a later decision sizes for it" {
		t.Errorf("got %s %q", u.Code, u.Reason)
	}
}

func TestConstraintsSplitShapesOnlyWhenTheyMatter(t *testing.T) {
	labelled := pods("p", 50, 500, 512*types.MiB)
	for i := range labelled {
		labelled[i].Scheduling = &types.PodScheduling{Labels: map[string]string{"pod": fmt.Sprint(i)}}
	}
	in := prepare(Request{Pending: labelled, Catalog: constraintCatalog()}, nil)
	if len(in.shapes) != 1 {
		t.Fatalf("labels alone, with no selector about, must not split shapes: got %d", len(in.shapes))
	}
}

// Bounding hopeless sizes must never change the plan: the same request
// planned exhaustively gives the same choice, placements and reasons, and
// every estimate is at most the exact packing.
func TestBoundedPlanEqualsExhaustive(t *testing.T) {
	catalog := benchCatalog400()[:120]
	for _, tc := range []struct {
		name  string
		pods  []types.PendingPod
		limit int
	}{
		{"constrained", benchConstrainedPending(3000, 60, true), 0},
		{"constrained with a ceiling", benchConstrainedPending(3000, 60, true), 40},
		{"requests only, all distinct", jittered(benchPending(3000)), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Pending: tc.pods, Catalog: catalog, Template: benchTemplate, MaxNewNodes: tc.limit}
			if n := len(prepare(req, nil).shapes) * len(catalog); n <= pruneAbove {
				t.Fatalf("work %d does not reach pruneAbove %d: the test would compare exhaustive with itself", n, pruneAbove)
			}
			bounded := PlanScaleUp(req)
			saved := pruneAbove
			pruneAbove = math.MaxInt
			exact := PlanScaleUp(req)
			pruneAbove = saved
			if bounded.Size != exact.Size || bounded.NewNodes != exact.NewNodes || bounded.HourlyCost != exact.HourlyCost ||
				!reflect.DeepEqual(bounded.Placements, exact.Placements) || !reflect.DeepEqual(bounded.Unplaceable, exact.Unplaceable) {
				t.Fatalf("bounded plan %s × %d ($%.2f) differs from exhaustive %s × %d ($%.2f)",
					bounded.Size, bounded.NewNodes, bounded.HourlyCost, exact.Size, exact.NewNodes, exact.HourlyCost)
			}
			exactBySize := map[string]Alternative{}
			for _, a := range exact.Alternatives {
				exactBySize[a.Size] = a
			}
			estimated := 0
			for _, a := range bounded.Alternatives {
				e := exactBySize[a.Size]
				switch {
				case !a.Estimated && a != e:
					t.Errorf("%s: packed alternative %+v differs from exhaustive %+v", a.Size, a, e)
				case a.Estimated && (a.NewNodes > e.NewNodes && e.Left == a.Left || a.Left > e.Left):
					t.Errorf("%s: estimate %+v is not a lower bound of %+v", a.Size, a, e)
				case a.Estimated:
					estimated++
				}
			}
			if estimated == 0 {
				t.Error("no size was bounded: the test does not exercise pruning")
			}
		})
	}
}

// jittered makes every CPU pod's requests differ.
func jittered(pods []types.PendingPod) []types.PendingPod {
	for i := range pods {
		if pods[i].Requests.GPUs == 0 {
			pods[i].Requests.MilliCPU += int64(i % 211)
			pods[i].Requests.Memory += int64(i%13) * types.MiB
		}
	}
	return pods
}

func TestAntiAffinitySeesTenantLabelsAndNamespaces(t *testing.T) {
	c4 := constraintCatalog()[:1]
	// Observed pods carry hanzo.ai/service as PendingPod.Service, not in
	// Scheduling.Labels: a selector on it must still see it.
	bySvc := []corev1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{types.LabelService: "api"}},
		TopologyKey: corev1.LabelHostname}}
	pending := constrained("api", 3, &types.PodScheduling{AntiAffinity: bySvc})
	for i := range pending {
		pending[i].Service = "api"
	}
	if p := PlanScaleUp(Request{Pending: pending, Catalog: c4}); p.NewNodes != 3 {
		t.Errorf("a selector on the tenant label repels its own pods: want 3 nodes, got %d", p.NewNodes)
	}
	// The same term in another namespace selects nothing there.
	other := constrained("w", 2, &types.PodScheduling{Labels: appLabels("web")})
	for i := range other {
		other[i].Namespace = "elsewhere"
	}
	anti := constrained("db", 1, &types.PodScheduling{Labels: appLabels("db"),
		AntiAffinity: []corev1.PodAffinityTerm{{LabelSelector: selectApp("web"), TopologyKey: corev1.LabelHostname}}})
	if p := PlanScaleUp(Request{Pending: concat(other, anti), Catalog: c4}); p.NewNodes != 1 {
		t.Errorf("anti-affinity reaches only its own namespace by default: want 1 shared node, got %d", p.NewNodes)
	}
	anti[0].Scheduling.AntiAffinity[0].Namespaces = []string{"elsewhere"}
	if p := PlanScaleUp(Request{Pending: concat(other, anti), Catalog: c4}); p.NewNodes != 2 {
		t.Errorf("a term naming the other namespace repels its pods: want 2 nodes, got %d", p.NewNodes)
	}
}
