package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

func TestExporterServesCountersGaugesAndSecondHistograms(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	addr, stop, err := e.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer stop()

	h := e.Handler().WithTags(map[string]string{"pool": "pool/acme/web/api/sim/east"})
	h.Counter("visor_test_decisions").Inc(2)
	h.Counter("visor_test_decisions").Inc(1)
	h.Gauge("visor_test_nodes").Update(4)
	h.Gauge("visor_test_nodes").Update(3)
	h.Timer("visor_test_latency").Record(300 * time.Millisecond)

	text := scrape(t, addr)
	require.Contains(t, text, `visor_test_decisions_total{pool="pool/acme/web/api/sim/east"} 3`)
	require.Contains(t, text, `visor_test_nodes{pool="pool/acme/web/api/sim/east"} 3`)
	// 0.3 s lands in the 0.5 s bucket, not the 0.25 s one: the buckets are
	// in seconds, not OpenTelemetry's millisecond-shaped defaults.
	require.Contains(t, text, `visor_test_latency_seconds_bucket{pool="pool/acme/web/api/sim/east",le="0.25"} 0`)
	require.Contains(t, text, `visor_test_latency_seconds_bucket{pool="pool/acme/web/api/sim/east",le="0.5"} 1`)
	require.Contains(t, text, "go_goroutines")
	require.False(t, strings.Contains(text, "otel_scope_name"), "scope labels are turned off")
}

func TestServeRefusesABusyAddress(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	addr, stop, err := e.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer stop()
	_, _, err = e.Serve(addr)
	require.ErrorContains(t, err, "metrics address "+addr)
}

// Every family has a HELP line, and the SDK's "none" labels are gone
// unless dropping them would make two series one.
func TestExporterHelpLinesAndNoNoneLabels(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	addr, stop, err := e.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer stop()

	e.Handler().WithTags(map[string]string{"pool": "p"}).Gauge("visor_pool_nodes").Update(2)
	rpc := e.Handler().WithTags(map[string]string{"operation": "StartWorkflowExecution", "activity_type": "none", "workflow_type": "PoolWorkflow", "task_queue": "none"})
	rpc.Counter("temporal_request").Inc(1)
	e.Handler().WithTags(map[string]string{"operation": "Q", "activity_type": "none"}).Counter("temporal_brand_new").Inc(1)
	// Two series that differ only in a "none" label keep their labels.
	e.Handler().WithTags(map[string]string{"worker_type": "none"}).Counter("visor_test_clash").Inc(1)
	e.Handler().Counter("visor_test_clash").Inc(1)

	text := scrape(t, addr)
	require.Contains(t, text, "# HELP visor_pool_nodes Nodes the pool's last observation holds.")
	require.Contains(t, text, "# HELP temporal_request_total Temporal client RPCs, by operation.")
	require.Contains(t, text, "# HELP temporal_brand_new_total Temporal Go SDK metric; see https://docs.temporal.io/references/sdk-metrics.")
	require.Contains(t, text, `temporal_request_total{operation="StartWorkflowExecution",workflow_type="PoolWorkflow"} 1`)
	require.Contains(t, text, `temporal_brand_new_total{operation="Q"} 1`)
	require.Contains(t, text, `visor_test_clash_total{worker_type="none"} 1`)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "# HELP ") {
			require.NotRegexp(t, `^# HELP \S+ ?$`, line, "empty HELP")
		}
	}
}
