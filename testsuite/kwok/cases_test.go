package kwok

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors/kwok"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// schedCase is one scheduling rule the planner must model as kube-scheduler
// applies it.
type schedCase struct {
	name string
	// policy changes the pool's policy (taints, labels, floor).
	policy func(*types.Policy)
	// before are workloads that must be running before the case's own
	// (the running pods a spread constraint counts).
	before    []workload
	workloads []workload
	// daemon is a DaemonSet every node of the pool runs (requests cpu).
	daemon string
	// unplaceable are workloads no size can hold: the pool buys nothing
	// for them and names the reason, which contains this.
	unplaceable []workload
	noFitReason string
	// node checks each bought node (its size, labels).
	node func(t *testing.T, n corev1.Node)
	// wantNodes, when set, is the node count the rule forces.
	wantNodes int
	// keep is the replicas each workload is scaled down to; evict says
	// that scale-down must move a pod through the eviction API.
	keep  int32
	evict bool
	// wantAfter, when set, is the node count after scale-down.
	wantAfter int
	// rule checks a binding of the case's pods (pod name to node) against
	// the rule under test; it judges kube-scheduler's and the sim's.
	rule func(bindings, fixed map[string]string, nodes map[string]corev1.Node) error
	// liveRule, when set, judges kube-scheduler's bindings instead of
	// rule, as they happened: its pods (ours marks the case's own) bound
	// one after another while nodes registered, so a rule over domains
	// that did not all exist yet holds only binding by binding.
	liveRule func(pods []corev1.Pod, ours map[string]bool, nodes map[string]corev1.Node) error
}

// early is a running pod of the spread case, pinned to zone kwok-<z>.
func early(z string) workload {
	return workload{name: "early-" + z, replicas: 1, cpu: "100m", mem: "128Mi", labels: map[string]string{"tier": "spread"},
		spec: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelTopologyZone: "kwok-" + z} }}
}

func cpuPods(name string, n int32, cpu string) workload {
	return workload{name: name, replicas: n, cpu: cpu, mem: "512Mi"}
}

func cases() []schedCase {
	antiAffinity := func(app string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}}
		}
	}
	sizeIs := func(sizes ...string) func(t *testing.T, n corev1.Node) {
		return func(t *testing.T, n corev1.Node) {
			got := n.Labels[corev1.LabelInstanceTypeStable]
			for _, s := range sizes {
				if got == s {
					return
				}
			}
			t.Errorf("node %s is %s, want one of %v", n.Name, got, sizes)
		}
	}
	return []schedCase{
		{name: "plain", workloads: []workload{cpuPods("web", 6, "1")}, keep: 2, evict: true},
		{name: "node-selector", workloads: []workload{{name: "arm", replicas: 6, cpu: "1", mem: "1Gi",
			spec: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"} }}},
			node: sizeIs("kwok-arm-4c8g"), keep: 2, evict: true},
		{name: "node-affinity", workloads: []workload{{name: "big", replicas: 10, cpu: "1", mem: "2Gi",
			spec: func(s *corev1.PodSpec) {
				s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"kwok-8c32g"}}}}}}}}
			}}},
			node: sizeIs("kwok-8c32g"), keep: 2, evict: true},
		{name: "taints", policy: func(p *types.Policy) {
			p.NodeTaints = []types.Taint{{Key: "dedicated", Value: "kwok", Effect: corev1.TaintEffectNoSchedule}}
		}, workloads: []workload{{name: "tolerant", replicas: 6, cpu: "1", mem: "1Gi", spec: func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "kwok", Effect: corev1.TaintEffectNoSchedule}}
		}}},
			unplaceable: []workload{cpuPods("intolerant", 1, "100m")}, noFitReason: "dedicated=kwok:NoSchedule",
			node: func(t *testing.T, n corev1.Node) {
				if len(n.Spec.Taints) == 0 || n.Spec.Taints[0].Key != "dedicated" {
					t.Errorf("node %s lacks the pool's taint: %v", n.Name, n.Spec.Taints)
				}
			}, keep: 2, evict: true},
		// Pods of an anti-affinity group that turn overdue in a later
		// second than the first ones must not be sized onto the booting
		// nodes promised to their siblings (sizing/promised.go).
		{name: "anti-affinity", workloads: []workload{{name: "solo", replicas: 4, cpu: "100m", mem: "128Mi", spec: antiAffinity("solo")}},
			wantNodes: 4, keep: 2, wantAfter: 2, rule: onePerNode},
		// Running pods, one per zone (created one after another, so kwok's
		// zone balancing puts each pinned pod's node in its zone), then
		// pods none of those nodes can hold, spread by zone: the planner
		// deals them evenly over the zones. (A pod only one zone admits
		// gets its node pinned there: zones_test.go.)
		{name: "zone-spread",
			before: []workload{early("a"), early("b"), early("c")},
			workloads: []workload{{name: "spread", replicas: 3, cpu: "2", mem: "1Gi", labels: map[string]string{"tier": "spread"},
				spec: func(s *corev1.PodSpec) {
					s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
						WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "spread"}}}}
				}}},
			keep: 0, rule: zoneSkewAtMost(1), liveRule: zoneSkewAsBound(1)},
		{name: "gpu", workloads: []workload{{name: "train", replicas: 2, cpu: "2", mem: "8Gi", gpus: 1,
			spec: func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{sizing.LabelGPUProduct: "NVIDIA-A10"} }}},
			node: sizeIs("kwok-gpu-8c32g-1xa10"), wantNodes: 2, keep: 1, wantAfter: 1},
		{name: "ephemeral", workloads: []workload{{name: "scratch", replicas: 3, cpu: "500m", mem: "512Mi", disk: "100Gi"}},
			node: func(t *testing.T, n corev1.Node) {
				if q := n.Status.Allocatable[corev1.ResourceEphemeralStorage]; q.Value() < 100<<30 {
					t.Errorf("node %s allocates %s ephemeral storage, less than one pod asks", n.Name, q.String())
				}
			}, keep: 1},
		{name: "no-fit", unplaceable: []workload{cpuPods("huge", 1, "64")}, noFitReason: "CPU"},
		{name: "daemonset", policy: func(p *types.Policy) { p.MinNodes = 1 }, daemon: "500m",
			workloads: []workload{cpuPods("busy", 4, "1")}, keep: 1},
		// A disruption budget of one node draining at once paces
		// scale-down, one node after another as each drain ends, down to
		// the floor: with the written 2m cooldown after scale-down still
		// pacing it, the five idle nodes would take 10m, past the wait.
		// The idle window is long, so consolidation removes them.
		{name: "drain-budget", policy: func(p *types.Policy) {
			p.MinNodes = 2
			p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 1}
			p.IdleWindow, p.ConsolidateAfter = types.Duration(10*time.Minute), types.Duration(5*time.Second)
			p.ScaleDownCooldown = types.DefaultPolicy().ScaleDownCooldown
		}, workloads: []workload{{name: "one", replicas: 7, cpu: "100m", mem: "128Mi", spec: antiAffinity("one")}},
			wantNodes: 7, keep: 0, wantAfter: 2, rule: onePerNode},
	}
}

// TestRealSchedulerBindsWhatThePoolBuys runs every case at once, each with
// its own pool and namespace, on one control plane and one worker.
func TestRealSchedulerBindsWhatThePoolBuys(t *testing.T) {
	e := startEnv(t)
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				e.run(t, c)
			})
		}
	})
}

func (e *env) run(t *testing.T, c schedCase) {
	service, ns := "kw-"+c.name, "kw-"+c.name
	key := poolKey(service)
	p := policy()
	if c.policy != nil {
		c.policy(&p)
	}
	e.createNamespace(t, ns)
	if c.daemon != "" {
		e.createDaemonSet(t, ns, key, c.daemon)
	}
	e.applyPool(t, key, p)
	floor := p.MinNodes
	if floor > 0 {
		waitFor(t, 2*time.Minute, "the floor's nodes", func() (bool, string) {
			n := len(e.poolNodes(t, key))
			return n == floor, fmt.Sprintf("%d nodes", n)
		})
	}
	for _, w := range c.before {
		e.createWorkload(t, ns, service, w)
		e.waitAllBound(t, ns, key, []workload{w})
	}
	started := time.Now()
	for _, w := range append(append([]workload(nil), c.workloads...), c.unplaceable...) {
		e.createWorkload(t, ns, service, w)
	}
	all := append(append([]workload(nil), c.before...), c.workloads...)
	if len(c.workloads) > 0 {
		e.waitAllBound(t, ns, key, all)
		t.Logf("%s: every pod bound %s after the first was created", c.name, time.Since(started).Round(time.Millisecond))
	}
	if len(c.unplaceable) > 0 {
		e.waitUnplaceable(t, key, c.noFitReason)
	}
	// A machine bought last may still be booting: its node counts too.
	waitFor(t, bootDelay+bindWithin, "every bought machine registered", func() (bool, string) {
		st, n := e.status(t, key), len(e.poolNodes(t, key))
		return n == st.TargetNodes, fmt.Sprintf("%d nodes, target %d", n, st.TargetNodes)
	})
	st := e.status(t, key)
	nodes := e.poolNodes(t, key)
	bought := 0
	for _, d := range st.Decisions {
		if d.Action == "scale-up" {
			bought += d.Added
		}
	}
	// The floor's node is a scale-up decision too.
	if len(nodes) != bought {
		t.Errorf("%d nodes, but the planner's scale-ups (the floor's included) said %d: %+v", len(nodes), bought, st.Decisions)
	}
	if c.wantNodes > 0 && len(nodes) != c.wantNodes {
		t.Errorf("%d nodes, the rule forces %d", len(nodes), c.wantNodes)
	}
	if len(c.workloads) == 0 && bought != floor {
		t.Errorf("bought %d nodes for pods no size can hold: %+v", bought, st.Decisions)
	}
	if !e.checkNodes(t, ns, c, nodes) {
		t.Logf("the pool's decisions: %+v", st.Decisions)
	}
	if len(c.workloads) > 0 {
		e.compareWithSim(t, ns, c, nodes)
	}
	if len(c.workloads) == 0 {
		return
	}
	e.scaleDown(t, ns, key, c, len(nodes))
}

// waitAllBound waits until every pod of the workloads is bound by
// kube-scheduler and Running (kwok plays the kubelet), none Pending.
func (e *env) waitAllBound(t *testing.T, ns string, key types.PoolKey, ws []workload) {
	t.Helper()
	want := map[string]int32{}
	for _, w := range ws {
		want[w.name] = w.replicas
	}
	waitFor(t, 3*time.Minute, "every pod bound and running", func() (bool, string) {
		running := map[string]int32{}
		var pending []string
		for _, p := range e.pods(t, ns) {
			if _, ours := want[p.Labels["app"]]; !ours || p.DeletionTimestamp != nil {
				continue
			}
			if _, bound := boundAt(&p); bound && p.Status.Phase == corev1.PodRunning {
				running[p.Labels["app"]]++
			} else {
				pending = append(pending, p.Name)
			}
		}
		for app, n := range want {
			if running[app] != n {
				st := e.status(t, key)
				return false, fmt.Sprintf("%s: %d of %d running; not yet: %v; pool nodes=%d target=%d pending=%d unplaceable=%v decisions=%+v",
					app, running[app], n, pending, st.Nodes, st.TargetNodes, st.PendingPods, st.Unplaceable, st.Decisions)
			}
		}
		return true, ""
	})
}

func (e *env) waitUnplaceable(t *testing.T, key types.PoolKey, reason string) {
	t.Helper()
	waitFor(t, 2*time.Minute, "the pod no size holds reported with its reason", func() (bool, string) {
		st := e.status(t, key)
		for _, why := range st.Unplaceable {
			if strings.Contains(why, reason) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("unplaceable=%v pending=%d", st.Unplaceable, st.PendingPods)
	})
	// The pool keeps buying nothing for it.
	time.Sleep(3 * time.Second)
}

// checkNodes: every bought node got a pod bound by kube-scheduler within
// the boot delay and bindWithin of its creation, and passes the case's own
// check.
func (e *env) checkNodes(t *testing.T, ns string, c schedCase, nodes map[string]corev1.Node) (ok bool) {
	t.Helper()
	failed := t.Failed()
	defer func() { ok = failed || !t.Failed() }()
	first := map[string]time.Time{}
	daemons := map[string]bool{}
	for _, p := range e.pods(t, ns) {
		if isDaemonPod(&p) {
			daemons[p.Spec.NodeName] = p.Spec.NodeName != ""
			continue
		}
		if at, ok := boundAt(&p); ok && p.Spec.SchedulerName == corev1.DefaultSchedulerName {
			if f, seen := first[p.Spec.NodeName]; !seen || at.Before(f) {
				first[p.Spec.NodeName] = at
			}
		}
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		n := nodes[name]
		if c.node != nil {
			c.node(t, n)
		}
		if got := n.Labels[corev1.LabelTopologyRegion]; got != region {
			t.Errorf("node %s is in region %q, the cluster's is %q", name, got, region)
		}
		if z := n.Labels[corev1.LabelTopologyZone]; !slices.Contains(kwok.Zones, z) {
			t.Errorf("node %s is in zone %q, not one of %v", name, z, kwok.Zones)
		}
		if c.daemon != "" && !daemons[name] {
			t.Errorf("node %s runs no pod of the DaemonSet", name)
		}
		at, ok := first[name]
		switch {
		case !ok:
			t.Errorf("node %s (%s) got no pod", name, n.Labels[corev1.LabelInstanceTypeStable])
		case at.Sub(n.CreationTimestamp.Time) > bootDelay+bindWithin:
			t.Errorf("node %s got its first pod %s after it registered", name, at.Sub(n.CreationTimestamp.Time))
		}
	}
	return true // the deferred check decides
}

// scaleDown shrinks the workloads to keep replicas and waits for the pool
// to drain and remove what it no longer needs.
func (e *env) scaleDown(t *testing.T, ns string, key types.PoolKey, c schedCase, peak int) {
	t.Helper()
	evicted, stop := e.evictions(t, ns)
	defer stop()
	for _, w := range c.workloads {
		e.keepSpread(t, ns, w.name, c.keep)
		e.scale(t, ns, w.name, c.keep)
	}
	kept := append([]workload(nil), c.before...)
	for _, w := range c.workloads {
		w.replicas = c.keep
		kept = append(kept, w)
	}
	waitFor(t, 3*time.Minute, "scale-down", func() (bool, string) {
		st := e.status(t, key)
		n := len(e.poolNodes(t, key))
		removed := 0
		for _, d := range st.Decisions {
			if d.Action == "scale-down" {
				removed += len(d.Removed)
			}
		}
		done := removed > 0 && n < peak && st.PendingPods <= len(c.unplaceable) && (c.wantAfter == 0 || n == c.wantAfter) && (!c.evict || evicted() > 0)
		return done, fmt.Sprintf("nodes=%d (peak %d, want %d) removed=%d evicted=%d pending=%d idle=%v blocked=%v skipped=%v decisions=%+v pods=%v",
			n, peak, c.wantAfter, removed, evicted(), st.PendingPods, st.IdleSince, st.DrainBlocked, st.SkippedNodes, st.Decisions, e.podSummary(t, ns))
	})
	e.waitAllBound(t, ns, key, kept)
	t.Logf("%s: scaled down from %d to %d nodes, %d pods evicted", c.name, peak, len(e.poolNodes(t, key)), evicted())
}

// poolNodesOf are the named nodes as the API server has them.
func (e *env) poolNodesOf(t *testing.T, _ string, names []string) []corev1.Node {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	var out []corev1.Node
	for _, name := range names {
		if n, err := e.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil {
			out = append(out, *n)
		}
	}
	return out
}

// podSummary is the namespace's pods as name@node(phase), for messages.
func (e *env) podSummary(t *testing.T, ns string) []string {
	var out []string
	for _, p := range e.pods(t, ns) {
		s := fmt.Sprintf("%s@%s(%s)", p.Name, p.Spec.NodeName, p.Status.Phase)
		if p.DeletionTimestamp != nil {
			s += "(deleting)"
		}
		out = append(out, s)
	}
	return out
}

// keepSpread marks keep pods of the workload, each on another node as far
// as the nodes go, with a pod deletion cost, so scaling the ReplicaSet
// down to keep deletes the others and leaves every node that had a pod
// with one: the node the pool then drains still runs a pod, which must
// leave through the eviction API. (Left to itself the ReplicaSet
// controller may empty a node outright, and no eviction is needed.)
func (e *env) keepSpread(t *testing.T, ns, app string, keep int32) {
	t.Helper()
	byNode := map[string][]string{}
	var nodes []string
	for _, p := range e.pods(t, ns) {
		if p.Labels["app"] != app || p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			continue
		}
		if _, seen := byNode[p.Spec.NodeName]; !seen {
			nodes = append(nodes, p.Spec.NodeName)
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
	}
	// The largest nodes first: the pods kept there leave the smaller
	// nodes' room to take in what a drain evicts.
	alloc := map[string]int64{}
	for _, n := range e.poolNodesOf(t, ns, nodes) {
		alloc[n.Name] = n.Status.Allocatable.Cpu().MilliValue()
	}
	sort.Slice(nodes, func(i, j int) bool {
		if alloc[nodes[i]] != alloc[nodes[j]] {
			return alloc[nodes[i]] > alloc[nodes[j]]
		}
		return nodes[i] < nodes[j]
	})
	var kept []string
	for round := 0; int32(len(kept)) < keep && len(nodes) > 0; round++ {
		added := false
		for _, n := range nodes {
			if round < len(byNode[n]) && int32(len(kept)) < keep {
				kept, added = append(kept, byNode[n][round]), true
			}
		}
		if !added {
			break
		}
	}
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	patch := []byte(`{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"1000"}}}`)
	for _, name := range kept {
		if _, err := e.admin.CoreV1().Pods(ns).Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The ReplicaSet controller picks the pods to delete from its own
	// informer: scaled before the patches reach it, it once kept both pods
	// on one node, and no drain had anything to evict.
	time.Sleep(2 * time.Second)
}

func (e *env) createDaemonSet(t *testing.T, ns string, key types.PoolKey, cpu string) {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector:                  map[string]string{types.LabelPool: key.NodePoolLabel()},
				TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "agent", Image: "registry.invalid/agent",
					Resources: corev1.ResourceRequirements{Requests: requests(cpu, "256Mi", 0, "")}}},
			}},
		},
	}
	if _, err := e.admin.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
