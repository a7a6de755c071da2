package activities

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

// The same burst on a real kube-apiserver: each pending pod is two watch
// events (its creation, then the scheduler's Unschedulable status), 1,000
// events in all, and the pool still gets at most one observe per second.
func TestIntegrationWatcherCoalescesRealAPIServerEvents(t *testing.T) {
	c := kubeapi.ForTest(t, kubeapi.Options{})
	cfg := rest.CopyConfig(c.AdminConfig)
	cfg.QPS, cfg.Burst = 1000, 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := kubeapi.EnsureNamespace(ctx, client, "web"); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Minute).Truncate(time.Second)
	n, burst := coalescedBurst(t, client, func(name, service string) {
		labels := map[string]string{types.LabelOrg: "acme", types.LabelProject: "web", types.LabelService: service}
		if _, err := client.CoreV1().Pods("web").Create(ctx, kubeapi.Pod("web", name, "100m", "64Mi", labels), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := kubeapi.MarkUnschedulable(ctx, client, "web", name, since, "0/0 nodes are available"); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("real kube-apiserver: 1,000 pod events (500 creates, 500 status updates) in %s cost the pool %d observes (%.1f per second of burst)",
		burst.Round(time.Millisecond), n, float64(n)/burst.Seconds())
}
