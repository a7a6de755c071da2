package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors"
)

// demoFleet is the size `visor dev` runs: 10 pools of 20 pods on 4 nodes each.
func demoFleet(b *testing.B, statePath string) (*Fleet, *fakeClock) {
	b.Helper()
	clock := &fakeClock{now: t0}
	f, err := New(Config{Cluster: testCluster, Clock: clock.Now, StatePath: statePath})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		pool := testPool(fmt.Sprintf("svc%d", i))
		if err := f.AddDemand(pool, Steady(20, smallPod)); err != nil {
			b.Fatal(err)
		}
		spec := connectors.NodeGroupSpec{Pool: pool, Size: "sim-8c16g", TargetSize: 2}
		if _, err := f.CreateNodeGroup(context.Background(), spec, connectors.IdempotencyKey(pool.WorkflowID())); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Step(clock.Now()); err != nil {
		b.Fatal(err)
	}
	return f, clock
}

// BenchmarkStepIdle is the per-tick cost of a settled demo fleet.
func BenchmarkStepIdle(b *testing.B) {
	f, clock := demoFleet(b, filepath.Join(b.TempDir(), "fleet.json"))
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Step(clock.Advance(time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepAfterEviction is a tick that replaces and reschedules one
// evicted pod and saves the whole state.
func BenchmarkStepAfterEviction(b *testing.B) {
	path := filepath.Join(b.TempDir(), "fleet.json")
	f, clock := demoFleet(b, path)
	ctx := context.Background()
	pods := f.Clientset().CoreV1().Pods("acme")
	b.ReportAllocs()
	for b.Loop() {
		l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil || len(l.Items) == 0 {
			b.Fatal("no pod to evict", err)
		}
		if err := pods.Delete(ctx, l.Items[0].Name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := f.Step(clock.Advance(time.Second)); err != nil {
			b.Fatal(err)
		}
	}
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size()), "state-bytes")
	}
}
