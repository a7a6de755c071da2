package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func scrapeMetrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + env.metricsAddr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// sample finds one series' value: name{...labels in any order...} value.
func sample(text, name string, labels map[string]string) (float64, bool) {
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\S+)$`)
	for _, m := range line.FindAllStringSubmatch(text, -1) {
		ok := true
		for k, v := range labels {
			if !regexp.MustCompile(`(^|,)` + regexp.QuoteMeta(k) + `="` + regexp.QuoteMeta(v) + `"`).MatchString(m[1]) {
				ok = false
				break
			}
		}
		if ok {
			f, err := strconv.ParseFloat(m[2], 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestWorkerMetrics checks what a worker's --metrics-addr serves: the SDK's
// own metrics and the per-pool ones the search pool (six pods of demand)
// emits while it scales up.
func TestWorkerMetrics(t *testing.T) {
	pool := map[string]string{"pool": searchPool, "org": "acme", "project": "web", "service": "search", "provider": "sim", "cluster": "sim-cli"}
	eventually(t, 60*time.Second, "the search pool scaled up for its pods", func() error {
		st := describeJSON(t, searchPool)
		if st.PendingPods != 0 || st.Nodes < 2 {
			return fmt.Errorf("nodes %d, pending %d", st.Nodes, st.PendingPods)
		}
		text := scrapeMetrics(t)
		nodes, ok := sample(text, "visor_pool_nodes", pool)
		if !ok || int(nodes) != st.Nodes {
			return fmt.Errorf("visor_pool_nodes = %v (found %v), status says %d", nodes, ok, st.Nodes)
		}
		return nil
	})
	text := scrapeMetrics(t)
	for _, name := range []string{"visor_pool_target_nodes", "visor_pool_pending_pods"} {
		_, ok := sample(text, name, pool)
		require.True(t, ok, "%s for the search pool", name)
	}
	up := map[string]string{"pool": searchPool, "direction": "up", "reason": "pending-pods", "outcome": "ok"}
	n, ok := sample(text, "visor_pool_scale_decisions_total", up)
	require.True(t, ok, "scale-up decisions counted")
	require.GreaterOrEqual(t, n, 1.0)
	count, ok := sample(text, "visor_pool_decision_latency_seconds_count", map[string]string{"pool": searchPool, "direction": "up"})
	require.True(t, ok)
	require.GreaterOrEqual(t, count, n, "one latency sample per decision")
	// The SDK's own metrics flow through the same handler.
	_, ok = sample(text, "temporal_workflow_task_execution_latency_seconds_count", map[string]string{"workflow_type": "PoolWorkflow"})
	require.True(t, ok, "SDK workflow task latency")
	_, ok = sample(text, "temporal_activity_execution_latency_seconds_count", map[string]string{"activity_type": "ObservePool"})
	require.True(t, ok, "SDK activity latency")
}
