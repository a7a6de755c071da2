package kwok

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

// TestRealSchedulerBindsIntoACapacityBuffersRoom: a CapacityBuffer of two
// pods of a PodTemplate's shape makes the pool buy room before any pod
// exists (counting none pending), the watcher marks the buffer
// ReadyForProvisioning, and when two real pods of that shape come,
// kube-scheduler binds them at once onto nodes bought before them: no
// pod waits for a node to boot. The pool then buys the room again.
func TestRealSchedulerBindsIntoACapacityBuffersRoom(t *testing.T) {
	t.Parallel() // its own stack; runs beside the other parallel suites
	e := startEnv(t)
	ctx, cancel := ctxFor(time.Minute)
	defer cancel()
	if err := kubeapi.InstallCapacityBufferCRD(ctx, e.cluster.AdminConfig); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(e.cluster.AdminConfig)
	const service, ns = "kw-buffer", "kw-buffer"
	key := poolKey(service)
	e.createNamespace(t, ns)
	e.applyPool(t, key, policy())

	burst := workload{name: "burst", replicas: 2, cpu: "1500m", mem: "1Gi"}
	tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "burst"}, Template: burst.replicaSet(ns, service).Spec.Template}
	if _, err := e.admin.CoreV1().PodTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(kubeapi.CapacityBuffers).Namespace(ns).Create(ctx, kubeapi.CapacityBuffer(ns, "burst", "burst", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The room comes before any pod: nodes bought, every machine a Ready
	// node, the buffer ready, nothing pending.
	waitFor(t, 90*time.Second, "the buffer's room bought and Ready", func() (bool, string) {
		st, nodes := e.status(t, key), e.poolNodes(t, key)
		ready := 0
		for _, n := range nodes {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		cond := readyForProvisioning(t, dyn, ns, "burst")
		return ready > 0 && ready == st.TargetNodes && cond == "True" && st.PendingPods == 0,
			fmt.Sprintf("%d Ready of target %d, %d pending, ReadyForProvisioning %q, capacity %q", ready, st.TargetNodes, st.PendingPods, cond, st.Capacity)
	})
	st := e.status(t, key)
	if !strings.Contains(st.Capacity, "buffers 2 pods (1 CapacityBuffers)") {
		t.Errorf("status.capacity %q does not show the buffer", st.Capacity)
	}
	if st.PendingPods != 0 {
		t.Errorf("%d pending pods: a buffer's pods are not pending", st.PendingPods)
	}
	before := e.poolNodes(t, key)
	t.Logf("room bought before any pod: %d nodes (%v)", len(before), slices.Sorted(maps.Keys(before)))

	// Two real pods of the buffer's shape bind at once, onto those nodes.
	started := time.Now()
	e.createWorkload(t, ns, service, burst)
	var bound []corev1.Pod
	waitFor(t, 10*time.Second, "the burst's pods bound", func() (bool, string) {
		bound = bound[:0]
		for _, p := range e.pods(t, ns) {
			if _, ok := boundAt(&p); ok && p.Labels["app"] == burst.name {
				bound = append(bound, p)
			}
		}
		return len(bound) == int(burst.replicas), fmt.Sprintf("%d of %d bound", len(bound), burst.replicas)
	})
	took := time.Since(started)
	t.Logf("both pods bound %s after the ReplicaSet was created", took.Round(time.Millisecond))
	if took > bootDelay+3*time.Second {
		t.Errorf("pods bound %s after creation: that is a node's boot, not room kept", took)
	}
	for _, p := range bound {
		if _, old := before[p.Spec.NodeName]; !old {
			t.Errorf("pod %s bound to %s, a node bought after it came: the buffer kept no room", p.Name, p.Spec.NodeName)
		}
	}

	// The pods took the room: the pool buys it again for the buffer.
	waitFor(t, 90*time.Second, "the buffer's room bought again", func() (bool, string) {
		nodes := e.poolNodes(t, key)
		return len(nodes) > len(before), fmt.Sprintf("%d nodes, %d before the pods", len(nodes), len(before))
	})
	if st := e.status(t, key); st.PendingPods != 0 {
		t.Errorf("%d pending pods after the burst bound", st.PendingPods)
	}
}

// readyForProvisioning is the buffer's ReadyForProvisioning status.
func readyForProvisioning(t *testing.T, dyn dynamic.Interface, ns, name string) string {
	t.Helper()
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	u, err := dyn.Resource(kubeapi.CapacityBuffers).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == kubernetes.ConditionReadyForProvisioning {
			return fmt.Sprint(m["status"])
		}
	}
	return ""
}
