package replay

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

// TestRecordBuffer records a pool given a CapacityBuffer (the change ID
// "capacity-buffers"): the pool buys room for the buffer's pods with no
// pod pending, keeps it, and lets it go once the buffer is deleted.
func TestRecordBuffer(t *testing.T) {
	if os.Getenv("VISOR_RECORD_HISTORIES") != "1" {
		t.Skip("set VISOR_RECORD_HISTORIES=1 (make replay-record) to re-record the fixtures")
	}
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "buffer", Provider: "sim", Cluster: "sim-buffer"}
	policy := testsuite.FastPolicy()
	policy.AllowedSizes = []string{"sim-2c4g"}
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-buffer", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
		Pools:    []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: policy}}},
	}
	s := testsuite.StartStack(t, spec, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	testsuite.WaitForPool(t, s, key, 60*time.Second, "at its floor", func(st contract.PoolStatus) bool { return st.Nodes == 1 })

	fleet := s.Fleet.Sims["sim-buffer"]
	tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "burst"}, Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{types.LabelOrg: "acme", types.LabelProject: "shop", types.LabelService: "buffer"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("900m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
	}}
	_, err := fleet.Clientset().CoreV1().PodTemplates("shop").Create(ctx, tmpl, metav1.CreateOptions{})
	must(t, err)
	buffers := fleet.Dynamic().Resource(kubeapi.CapacityBuffers).Namespace("shop")
	_, err = buffers.Create(ctx, kubeapi.CapacityBuffer("shop", "burst", "burst", 3), metav1.CreateOptions{})
	must(t, err)
	// A bad one beside it: its error reaches the pool's status.
	_, err = buffers.Create(ctx, kubeapi.CapacityBuffer("shop", "negative", "burst", -1), metav1.CreateOptions{})
	must(t, err)
	st := testsuite.WaitForPool(t, s, key, 90*time.Second, "the buffer's room bought", func(st contract.PoolStatus) bool {
		return st.Nodes >= 2 && st.PendingPods == 0 && strings.Contains(st.Capacity, "buffers 3 pods") &&
			strings.Contains(st.Capacity, "buffer shop/negative: spec.replicas must be >= 0, got -1")
	})
	t.Logf("with the buffer: %d nodes, capacity %q", st.Nodes, st.Capacity)
	must(t, buffers.Delete(ctx, "burst", metav1.DeleteOptions{}))
	st = testsuite.WaitForPool(t, s, key, 90*time.Second, "the room let go", func(st contract.PoolStatus) bool { return st.Nodes == 1 })
	var log []string
	for _, d := range st.Decisions {
		log = append(log, d.Action+": "+d.Reason+" -> "+d.Outcome)
	}
	t.Logf("decisions:\n%s", strings.Join(log, "\n"))
	_, err = starter.DeregisterPool(ctx, s.Client, key, contract.DeregisterRequest{Reason: "record"})
	must(t, err)
	must(t, s.Client.GetWorkflow(ctx, key.WorkflowID(), "").Get(ctx, nil))
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	write(t, ctx, s.Client, pc, key.WorkflowID(), "pool-buffer-"+fixtureTag()+".json")
}
