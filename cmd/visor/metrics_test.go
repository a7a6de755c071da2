package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/deploy/grafana"
	"github.com/hanzoai/visor-fleet/internal/metrics"
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
		// Its pods fit one node of the size the first decision buys (the
		// floor is sized for the pods already pending), or several.
		if st.PendingPods != 0 || st.Nodes < 1 {
			return fmt.Errorf("nodes %d, pending %d, blocked %v, frozen %q, nohelp %v, inflight %d, decisions %+v, rejected %v %s", st.Nodes, st.PendingPods, st.Blocked, st.Frozen, st.NoHelp, st.InFlight, st.Decisions, st.Rejected, st.LastRejected)
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
	var n float64
	for _, reason := range []string{"floor", "pending-pods"} {
		v, _ := sample(text, "visor_pool_scale_decisions_total", map[string]string{"pool": searchPool, "direction": "up", "reason": reason, "outcome": "ok"})
		n += v
	}
	require.GreaterOrEqual(t, n, 1.0, "scale-up decisions counted")
	count, ok := sample(text, "visor_pool_decision_latency_seconds_count", map[string]string{"pool": searchPool, "direction": "up"})
	require.True(t, ok)
	require.GreaterOrEqual(t, count, n, "one latency sample per decision")
	// What the Grafana dashboard adds: the pool's state, its oldest pending
	// pod's wait and its cost per hour.
	st := describeJSON(t, searchPool)
	state, ok := sample(text, "visor_pool_state", map[string]string{"pool": searchPool, "state": st.State})
	require.True(t, ok && state == 1, "visor_pool_state is 1 for the pool's state %s", st.State)
	_, ok = sample(text, "visor_pool_oldest_pending_seconds", pool)
	require.True(t, ok, "visor_pool_oldest_pending_seconds for the search pool")
	cost, ok := sample(text, "visor_pool_hourly_cost_dollars", pool)
	require.True(t, ok && cost > 0, "visor_pool_hourly_cost_dollars with nodes running: %v", cost)
	// Every metric the dashboard queries has a HELP line of its own.
	for _, name := range grafana.Metrics() {
		require.NotContains(t, metrics.HelpFor(name), "no description", "dashboard metric %s", name)
		if strings.HasPrefix(name, "visor_pool_") {
			require.Contains(t, text, "# HELP "+name+" "+metrics.HelpFor(name), "dashboard metric %s served with its HELP", name)
		}
	}
	// The SDK's own metrics flow through the same handler.
	_, ok = sample(text, "temporal_workflow_task_execution_latency_seconds_count", map[string]string{"workflow_type": "PoolWorkflow"})
	require.True(t, ok, "SDK workflow task latency")
	_, ok = sample(text, "temporal_activity_execution_latency_seconds_count", map[string]string{"activity_type": "Resync"})
	require.True(t, ok, "SDK activity latency")
}

func TestNewMetricsOffAndOn(t *testing.T) {
	off, err := newMetrics("")
	require.NoError(t, err)
	require.Empty(t, off.Addr)
	off.Stop()

	on, err := newMetrics("127.0.0.1:0")
	require.NoError(t, err)
	defer on.Stop()
	on.Handler.WithTags(map[string]string{"pool": "p"}).Gauge("visor_test_gauge").Update(7)
	resp, err := http.Get("http://" + on.Addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `visor_test_gauge{pool="p"} 7`)

	_, err = newMetrics(on.Addr)
	require.ErrorContains(t, err, "metrics address "+on.Addr)
}

// TestWorkerCommandServesMetrics runs `visor worker --metrics-addr` as its
// own process on a separate task queue and reads the SDK's poller metrics.
func TestWorkerCommandServesMetrics(t *testing.T) {
	probe, err := newMetrics("127.0.0.1:0")
	require.NoError(t, err)
	addr := probe.Addr
	probe.Stop() // free the port for the worker

	cmd := exec.Command(os.Args[0], "--address", env.address, "--namespace", env.namespace,
		"worker", "--task-queue", "cli-metrics-test", "--metrics-addr", addr)
	cmd.Env = append(os.Environ(), runAsCLI+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			require.NoError(t, err, "worker exits cleanly on interrupt: %s", out.String())
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("worker did not stop on interrupt: %s", out.String())
		}
	}()
	eventually(t, 30*time.Second, "the worker's poller metrics", func() error {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if _, ok := sample(string(body), "temporal_num_pollers", map[string]string{"task_queue": "cli-metrics-test"}); !ok {
			return fmt.Errorf("no temporal_num_pollers for the task queue yet; worker output: %s", out.String())
		}
		return nil
	})
}
