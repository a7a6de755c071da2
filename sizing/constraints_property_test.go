package sizing

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/hanzoai/visor-fleet/types"
)

// randomConstrainedRequest mixes a few deployments with random constraints
// over the constraint catalog, with a pool taint half the time.
func randomConstrainedRequest(r *rand.Rand) Request {
	template := constraintTemplate
	if r.IntN(2) == 0 {
		template.Taints = []types.Taint{{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
	}
	var pending []types.PendingPod
	for d := range 1 + r.IntN(6) {
		app := fmt.Sprintf("app%d", r.IntN(3))
		s := &types.PodScheduling{Labels: map[string]string{"app": app}}
		if r.IntN(2) == 0 {
			s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}
		switch r.IntN(7) {
		case 0:
			s.NodeSelector = map[string]string{corev1.LabelArchStable: []string{"amd64", "arm64", "s390x"}[r.IntN(3)]}
		case 1:
			s.NodeAffinity = affinity(requirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, []string{"us-east-1a", "eu-west-1a"}[r.IntN(2)])).NodeAffinity
		case 2:
			s.HostPorts = []types.HostPort{{Port: 8000 + r.Int32N(2)}}
		case 3:
			s.AntiAffinity = []corev1.PodAffinityTerm{{LabelSelector: selectApp(fmt.Sprintf("app%d", r.IntN(3))), TopologyKey: corev1.LabelHostname}}
		case 4:
			s.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1 + r.Int32N(2), TopologyKey: corev1.LabelHostname,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selectApp(app)}}
		case 5:
			s.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selectApp(app)}}
		}
		cpu := []int64{200, 500, 1500, 5000}[r.IntN(4)]
		for i := range 1 + r.IntN(8) {
			pending = append(pending, types.PendingPod{Namespace: "app", Name: fmt.Sprintf("d%d-%d", d, i),
				Requests: types.Resources{MilliCPU: cpu, Memory: 512 * types.MiB}, Scheduling: s})
		}
	}
	catalog := constraintCatalog()
	var existing []types.NodeObservation
	if r.IntN(2) == 0 {
		existing = append(existing, node("boot", "c4", types.NodeProvisioning, catalog[0].Allocatable(), types.Resources{MilliCPU: 1000}))
	}
	return Request{Pending: pending, Existing: existing, Catalog: catalog, Template: template, MaxNewNodes: r.IntN(4)}
}

// checkConstraints is the oracle: it replays the plan pod by pod with the
// scheduling libraries and the rules as the kube-scheduler states them.
func checkConstraints(req Request, plan Plan) error {
	pods := map[string]types.PendingPod{}
	for _, p := range req.Pending {
		pods[p.Key()] = p
	}
	size, _ := catalogEntry(req.Catalog, plan.Size)
	templates := Templates(size, req.Template)
	on := map[string][]types.PendingPod{}
	for _, pl := range plan.Placements {
		on[pl.Node] = append(on[pl.Node], pods[pl.Pod])
	}
	for target, placed := range on {
		var nodes []*corev1.Node
		var room types.Resources
		if name, ok := cutPrefix(target, ExistingNodePrefix); ok {
			i := slices.IndexFunc(req.Existing, func(n types.NodeObservation) bool { return n.Name == name })
			nodes = []*corev1.Node{existingNodeObject(req.Existing[i], req.Catalog, req.Template).named}
			room = req.Existing[i].FreeRoom()
		} else {
			for _, nt := range templates {
				nodes = append(nodes, nt.Node())
			}
			room = size.Allocatable()
		}
		var used types.Resources
		ports := map[portKey]string{}
		for _, p := range placed {
			used = used.Add(podDemand(p))
			s := p.Scheduling
			if !slices.ContainsFunc(nodes, func(n *corev1.Node) bool { return oracleAdmits(p, n) }) {
				return fmt.Errorf("%s on %s: the node's labels or taints refuse it", p.Key(), target)
			}
			if s == nil {
				continue
			}
			for _, h := range s.HostPorts {
				if other, clash := ports[keyOfPort(h)]; clash {
					return fmt.Errorf("%s and %s bind port %d on %s", other, p.Key(), h.Port, target)
				}
				ports[keyOfPort(h)] = p.Key()
			}
			for _, term := range s.AntiAffinity {
				sel, _ := metav1.LabelSelectorAsSelector(term.LabelSelector)
				for _, q := range placed {
					if q.Key() != p.Key() && q.Scheduling != nil && sel.Matches(labels.Set(q.Scheduling.Labels)) {
						return fmt.Errorf("%s repels %s, both on %s", p.Key(), q.Key(), target)
					}
				}
			}
			for _, c := range s.TopologySpread {
				sel, _ := metav1.LabelSelectorAsSelector(c.LabelSelector)
				if c.TopologyKey != corev1.LabelHostname || !sel.Matches(labels.Set(s.Labels)) || !isNew(target) {
					continue
				}
				n := 0
				for _, q := range placed {
					if q.Scheduling != nil && sel.Matches(labels.Set(q.Scheduling.Labels)) {
						n++
					}
				}
				if n > int(c.MaxSkew) {
					return fmt.Errorf("%s: %d pods of its spread on new node %s, maxSkew %d", p.Key(), n, target, c.MaxSkew)
				}
			}
		}
		if !used.Fits(room) {
			return fmt.Errorf("%s: pods need %s, room is %s", target, used, room)
		}
	}
	for _, u := range plan.Unplaceable {
		if u.Code != CodeNoFit {
			continue
		}
		p := pods[u.Pod]
		for _, t := range req.Catalog {
			for _, nt := range Templates(t, req.Template) {
				if oracleAdmits(p, nt.Node()) && podDemand(p).Fits(t.Allocatable()) && (p.Requests.GPUs == 0 || p.GPUModel == "" || p.GPUModel == t.GPUModel) {
					return fmt.Errorf("%s reported no-fit (%s), but %s (zone %q) holds it", u.Pod, u.Reason, t.Name, nt.Zone)
				}
			}
		}
	}
	return nil
}

func oracleAdmits(p types.PendingPod, n *corev1.Node) bool {
	var tolerations []corev1.Toleration
	if s := p.Scheduling; s != nil {
		if ok, err := nodeaffinity.NewRequiredNodeAffinity(s.NodeSelector, affinityOf(s.NodeAffinity)).Match(n); err != nil || !ok {
			return false
		}
		tolerations = s.Tolerations
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(quiet, &t, true) }) {
			return false
		}
	}
	return true
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

func isNew(target string) bool { _, ok := cutPrefix(target, NewNodePrefix); return ok }

func TestConstrainedPlansHonourEveryRule(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	for run := range 400 {
		req := randomConstrainedRequest(r)
		plan := PlanScaleUp(req)
		if err := checkConstraints(req, plan); err != nil {
			t.Fatalf("run %d: %v\nplan %+v", run, err, plan)
		}
		if again := PlanScaleUp(shuffled(r, req)); !reflect.DeepEqual(plan, again) {
			t.Fatalf("run %d: plan depends on input order", run)
		}
	}
}
