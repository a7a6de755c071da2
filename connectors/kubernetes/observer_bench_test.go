package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

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
