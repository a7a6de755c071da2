package kubernetes

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A real Prometheus for the usage tests: Debian's package, started on
// loopback with a temp config. Missing locally the tests skip; in CI
// (CI=true, where .ci/run installs it) they fail.

// prometheusBinary finds the server or skips (fails under CI=true).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "prometheus binary not found on PATH (Debian: apt-get install -y prometheus)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; .ci/run must install it", msg)
		}
		t.Skip(msg)
	}
	return path
}

// nodeExporter serves, for one cluster's nodes, the kubelet resource
// series the usage source reads: a CPU-seconds counter that grows at cores
// per second, and a working-set gauge.
type nodeExporter struct {
	Addr string
}

type nodeLoad struct {
	Cores       float64
	MemoryBytes int64
}

func startNodeExporter(t *testing.T, nodes map[string]nodeLoad) nodeExporter {
	t.Helper()
	reg := prometheus.NewRegistry()
	start := time.Now()
	for name, load := range nodes {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: DefaultCPUSeries, Help: "CPU seconds used by the node", ConstLabels: prometheus.Labels{"node": name},
		}, func() float64 { return load.Cores * time.Since(start).Seconds() }))
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: DefaultMemorySeries, Help: "working set of the node", ConstLabels: prometheus.Labels{"node": name},
		}, func() float64 { return float64(load.MemoryBytes) }))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return nodeExporter{Addr: l.Addr().String()}
}

// scrapeTarget is one exporter and the cluster label its series get, as
// a cluster's remote_write would stamp them.
type scrapeTarget struct {
	Exporter nodeExporter
	Cluster  string
}

// startPrometheus runs the server scraping targets every second and
// returns its base URL once it is ready.
func startPrometheus(t *testing.T, targets ...scrapeTarget) string {
	t.Helper()
	bin := prometheusBinary(t)
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	for i, tg := range targets {
		fmt.Fprintf(&cfg, "  - job_name: kubelet-%d\n    static_configs:\n      - targets: [%q]\n        labels: {cluster: %q}\n",
			i, tg.Exporter.Addr, tg.Cluster)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freeLoopbackPort(t)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("prometheus on %s not ready after 30s: %v\n%s", addr, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond every 250 ms until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, timeout, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
