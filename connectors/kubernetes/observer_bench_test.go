package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
)

// BenchmarkObserveCluster samples a 200-node, 6,000-pod cluster (5,000
// bound, 1,000 pending across 20 pools). Most of the time is the fake
// clientset copying objects; the grouping itself is linear.
func BenchmarkObserveCluster(b *testing.B) {
	var objects []runtime.Object
	since := observedAt.Add(-time.Minute)
	for n := range 200 {
		pool := apiPool
		pool.Service = fmt.Sprintf("svc%d", n%20)
		objects = append(objects, newNode(fmt.Sprintf("n%d", n), pool.NodePoolLabel()))
		for p := range 25 {
			objects = append(objects, newPod("web", fmt.Sprintf("p%d-%d", n, p), onNode(fmt.Sprintf("n%d", n)), requesting("100m", "128Mi")))
		}
		for p := range 5 {
			objects = append(objects, newPod("web", fmt.Sprintf("q%d-%d", n, p),
				tenant("acme", "shop", pool.Service), unschedulable(since), requesting("1", "1Gi")))
		}
	}
	client, _ := kubefake.NewClientset(kubefake.Options{}, objects...)
	obs := NewObserver(client, observerConfig(nil))
	b.ReportAllocs()
	for b.Loop() {
		got, err := obs.ObserveCluster(context.Background())
		if err != nil || len(got.Pools) != 20 {
			b.Fatalf("pools=%d err=%v", len(got.Pools), err)
		}
	}
}

// BenchmarkGroupFiftyThousandPending is the observer's part for one pool
// with 50,000 pending pods (5 Deployments' worth of shapes), from objects
// already read: pending pods described, grouped and summarized by shape.
func BenchmarkGroupFiftyThousandPending(b *testing.B) {
	since := observedAt.Add(-time.Minute)
	pods := make([]corev1.Pod, 0, 50_000)
	for i := range 50_000 {
		cpu := []string{"100m", "250m", "500m", "1", "2"}[i%5]
		pods = append(pods, *newPod("web", fmt.Sprintf("api-%d-%05d", i%5, i), tenant("acme", "shop", "api"), unschedulable(since), requesting(cpu, "256Mi")))
	}
	o := NewObserver(nil, observerConfig(nil))
	b.ReportAllocs()
	for b.Loop() {
		got := o.group(nil, pods, nil)
		for _, p := range got.Pools {
			if p.PendingCount() != 50_000 || len(p.PendingShapes) != 5 {
				b.Fatalf("counted %d in %d shapes", p.PendingCount(), len(p.PendingShapes))
			}
		}
	}
}
