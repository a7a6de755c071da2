package kwok

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// TestRealSchedulerReplacementCompletes: five 5 GiB pods buy at least one
// kwok-8c32g (it holds six, a kwok-4c8g one); scaled down to one pod kept
// on a kwok-8c32g (a pod deletion cost), the other nodes empty and go,
// and that node is underused but, by this pool's idle thresholds, not
// idle: nothing else can take its pod, and one kwok-4c8g holds it for
// less than half the price. The pool buys the kwok-4c8g first, in the old
// node's zone, and once it is Ready drains the kwok-8c32g: the pod,
// evicted, is bound by kube-scheduler on the new node. The replacement
// never hangs: the new node, empty and idle meanwhile, is not taken by
// the idle rule, and nothing is abandoned.
func TestRealSchedulerReplacementCompletes(t *testing.T) {
	t.Parallel() // its own stack; runs beside the other parallel suites
	e := startEnv(t)
	service, ns := "kw-replace", "kw-replace"
	key := poolKey(service)
	p := policy()
	p.AllowedSizes = []string{"kwok-4c8g", "kwok-8c32g"}
	p.ConsolidateAfter = types.Duration(5 * time.Second)
	// The old node, with its one pod, is underused but not idle: only
	// the replacement may take it, as in the run the hang was seen in;
	// the new node, empty until the drain, is idle after 4 s.
	p.IdleCPUThreshold, p.IdleMemoryThreshold = 0.05, 0.05
	e.createNamespace(t, ns)
	e.applyPool(t, key, p)
	w := workload{name: "mem", replicas: 5, cpu: "1", mem: "5Gi"}
	e.createWorkload(t, ns, service, w)
	e.waitAllBound(t, ns, key, []workload{w})
	nodes := e.poolNodes(t, key)
	var big, zone string
	for _, pod := range e.pods(t, ns) {
		if n, ok := nodes[pod.Spec.NodeName]; ok && n.Labels[corev1.LabelInstanceTypeStable] == "kwok-8c32g" && big == "" {
			big, zone = n.Name, n.Labels[corev1.LabelTopologyZone]
			e.patchPod(t, ns, pod.Name, `{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"1000"}}}`)
		}
	}
	if big == "" {
		t.Fatalf("no kwok-8c32g among %v for five 5 GiB pods", sizesOf(nodes))
	}
	evicted, stop := e.evictions(t, ns)
	defer stop()
	e.scale(t, ns, w.name, 1)
	w.replicas = 1
	var last contract.PoolStatus
	waitFor(t, 2*time.Minute, "the kwok-8c32g replaced by one kwok-4c8g", func() (bool, string) {
		st := e.status(t, key)
		last = st
		nodes := e.poolNodes(t, key)
		_, bigLeft := nodes[big]
		for _, d := range st.Decisions {
			if d.Action == "replace-abandoned" {
				t.Fatalf("replacement abandoned: %s\n%s", d.Reason, decisionsOf(st))
			}
		}
		done := !bigLeft && len(nodes) == 1 && evicted() == 1
		return done, fmt.Sprintf("nodes %v, evicted %d, blocked %v, skipped %v, decisions:\n%s", sizesOf(nodes), evicted(), st.Blocked, st.SkippedNodes, decisionsOf(st))
	})
	e.waitAllBound(t, ns, key, []workload{w})
	for _, n := range e.poolNodes(t, key) {
		if got := n.Labels[corev1.LabelInstanceTypeStable]; got != "kwok-4c8g" {
			t.Errorf("after the replacement the pool runs a %s, want the kwok-4c8g", got)
		}
		if got := n.Labels[corev1.LabelTopologyZone]; got != zone {
			t.Errorf("the new node is in zone %s, the old one was in %s", got, zone)
		}
	}
	// The drain's decision is recorded once its delete returned, a moment
	// after the node left the API server.
	waitFor(t, 20*time.Second, "the replacement's drain recorded", func() (bool, string) {
		last = e.status(t, key)
		for _, d := range last.Decisions {
			if d.Action == "scale-down" && slices.Contains(d.Removed, big) {
				return true, ""
			}
		}
		return false, decisionsOf(last)
	})
	var replaced, drained, newRemoved bool
	for _, d := range last.Decisions {
		replaced = replaced || d.Action == "replace" && d.Size == "kwok-4c8g"
		drained = drained || d.Action == "scale-down" && strings.HasPrefix(d.Reason, "replacement: 1 node drained") && slices.Contains(d.Removed, big)
		for _, gone := range d.Removed {
			if _, before := nodes[gone]; !before {
				newRemoved = true // the replacement's new node, the one node bought since
			}
		}
	}
	if !replaced || !drained || newRemoved {
		t.Errorf("want the replace, then its drain of %s, and the new node never removed:\n%s", big, decisionsOf(last))
	}
}

func decisionsOf(st contract.PoolStatus) string {
	var said []string
	for _, d := range st.Decisions {
		said = append(said, fmt.Sprintf("%s: %s => %s %v", d.Action, d.Reason, d.Outcome, d.Removed))
	}
	return strings.Join(said, "\n")
}

func (e *env) patchPod(t *testing.T, ns, name, patch string) {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	if _, err := e.admin.CoreV1().Pods(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// sizesOf is each node's size, by name, for messages.
func sizesOf(nodes map[string]corev1.Node) map[string]string {
	out := make(map[string]string, len(nodes))
	for name, n := range nodes {
		out[name] = n.Labels[corev1.LabelInstanceTypeStable] + "/" + n.Labels[corev1.LabelTopologyZone]
	}
	return out
}
