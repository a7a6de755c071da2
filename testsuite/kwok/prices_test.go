package kwok

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// TestRealSchedulerBuysAtTheAdjustedPrice: a negotiated price for
// kwok-4c8g ($0.01 an hour against the list's $0.04) makes it the pool's
// cheapest size for a 1-CPU pod, which at list prices goes on a kwok-2c4g
// ($0.02): the pool buys the kwok-4c8g, its decision names the adjusted
// price, and kube-scheduler binds the pod on it.
func TestRealSchedulerBuysAtTheAdjustedPrice(t *testing.T) {
	t.Parallel() // its own stack; runs beside the other parallel suites
	e := startEnv(t)
	service, ns := "kw-prices", "kw-prices"
	key := poolKey(service)
	e.createNamespace(t, ns)
	p := policy()
	p.AllowedSizes = []string{"kwok-2c4g", "kwok-4c8g"}
	negotiated := 0.01
	p.PriceAdjustments = []types.PriceAdjustment{{Sizes: []string{"kwok-4c8g"}, Price: &negotiated}}
	e.applyPool(t, key, p)
	w := workload{name: "one", replicas: 1, cpu: "1", mem: "1Gi"}
	e.createWorkload(t, ns, service, w)
	e.waitAllBound(t, ns, key, []workload{w})

	nodes := e.poolNodes(t, key)
	var sizes []string
	for _, n := range nodes {
		sizes = append(sizes, n.Labels[corev1.LabelInstanceTypeStable])
	}
	if len(nodes) != 1 || sizes[0] != "kwok-4c8g" {
		t.Fatalf("bought %v, want one kwok-4c8g at the adjusted $0.01/h", sizes)
	}
	var reasons []string
	waitFor(t, 30*time.Second, "a scale-up decision naming the adjusted price", func() (bool, string) {
		reasons = reasons[:0]
		for _, d := range e.status(t, key).Decisions {
			if d.Action == "scale-up" && d.Added > 0 {
				reasons = append(reasons, d.Reason)
				if strings.Contains(d.Reason, "kwok-4c8g") && strings.Contains(d.Reason, "0.0100") {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("scale-ups: %q", reasons)
	})
}
