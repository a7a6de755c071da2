package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/workers"
)

// env is the one in-process Temporal server every test in this package
// shares (starting it is the slow part), with a worker over a simulated
// cluster and the pools of testdata/fleet.yaml registered.
var env struct {
	address, namespace string
	client             client.Client
	fleet              *devfleet.Fleet
	spec               starter.SpecFile
	metricsAddr        string
}

// runAsCLI makes the test binary act as visor itself, so a test can check
// the real exit status and stderr of main.
const runAsCLI = "VISOR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsCLI) == "1" {
		main()
		os.Exit(0)
	}
	started := time.Now()
	stop, err := startEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd/visor tests: set-up failed:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "cmd/visor tests: server, worker and fleet up in %s\n", time.Since(started).Round(time.Millisecond))
	code := m.Run()
	stop()
	os.Exit(code)
}

func quietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func startEnv() (stop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: quietLogger()}))
	stops := []func(){func() {
		// temporaltest logs a shutdown error through its *testing.T, which
		// TestMain has none of.
		defer func() { _ = recover() }()
		ts.Stop()
	}}
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	env.address, env.namespace = ts.GetFrontendHostPort(), ts.GetDefaultNamespace()
	env.client = ts.GetDefaultClient()
	if err := starter.EnsureSearchAttributes(ctx, env.client, env.namespace); err != nil {
		return stop, err
	}
	if env.spec, err = starter.LoadSpecFile(filepath.Join("testdata", "fleet.yaml")); err != nil {
		return stop, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if env.fleet, err = devfleet.New(env.spec, devfleet.Options{ProvisionDelay: 500 * time.Millisecond, Logger: quiet}); err != nil {
		return stop, err
	}
	simCtx, stopSim := context.WithCancel(context.Background())
	stops = append(stops, stopSim)
	env.fleet.Run(simCtx, 100*time.Millisecond)

	// The worker reports through what `visor worker --metrics-addr` sets up.
	ms, err := newMetrics("127.0.0.1:0")
	if err != nil {
		return stop, err
	}
	stops = append(stops, ms.Stop)
	env.metricsAddr = ms.Addr
	wc := ts.NewClientWithOptions(client.Options{Logger: quietLogger(), MetricsHandler: ms.Handler})
	ledgerDir, err := os.MkdirTemp("", "visor-cli-test-")
	if err != nil {
		return stop, err
	}
	stops = append(stops, func() { _ = os.RemoveAll(ledgerDir) })
	ledger, err := meterledger.Open(filepath.Join(ledgerDir, "meter.db"))
	if err != nil {
		return stop, err
	}
	stops = append(stops, func() { _ = ledger.Close() })
	if err := ms.watchFleet(wc, ledger); err != nil {
		return stop, err
	}
	w := workers.New(wc, contract.DefaultTaskQueue, &activities.Activities{Clusters: env.fleet.Clusters, Temporal: wc, Meter: ledger}, worker.Options{})
	if err := w.Start(); err != nil {
		return stop, err
	}
	stops = append(stops, w.Stop)

	for _, d := range env.spec.Clusters {
		if _, _, err := starter.EnrollCluster(ctx, env.client, d, ""); err != nil {
			return stop, err
		}
	}
	for _, p := range env.spec.Pools {
		if _, err := starter.ApplyPool(ctx, env.client, p.PoolSpec, ""); err != nil {
			return stop, err
		}
	}
	return stop, nil
}

// visor runs the CLI in-process against the shared server, as a user
// would with --address and --namespace.
func visor(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return visorWith(t, append([]string{"--address", env.address, "--namespace", env.namespace}, args...)...)
}

// visorWith runs the CLI with exactly these arguments.
func visorWith(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustVisor is visor that fails the test on error.
func mustVisor(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, err := visor(t, args...)
	if err != nil {
		t.Fatalf("visor %v: %v\nstdout: %s\nstderr: %s", args, err, out, stderr)
	}
	return out
}

// visorProcess runs the test binary as the visor command, for exit codes.
func visorProcess(t *testing.T, args ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--address", env.address, "--namespace", env.namespace}, args...)...)
	cmd.Env = append(os.Environ(), runAsCLI+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// eventually retries check until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not reached in %s: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func TestErrorTextShowsWhyTheFrontendRefused(t *testing.T) {
	defer func(was bool) { dialedWithoutCredential = was }(dialedWithoutCredential)
	dialedWithoutCredential = false
	err := fmt.Errorf("list pools (q): %w", serviceerror.NewPermissionDenied("Request unauthorized.", "ListWorkflowExecutions: query \"\" lists the whole namespace"))
	got := errorText(err)
	if !strings.HasSuffix(got, "Request unauthorized.: ListWorkflowExecutions: query \"\" lists the whole namespace") {
		t.Fatalf("errorText = %q, want the refusal's reason after its message", got)
	}
	if plain := errorText(errors.New("boom")); plain != "boom" {
		t.Fatalf("errorText(plain error) = %q", plain)
	}
	// A call that carried no credential is told how to get one.
	dialedWithoutCredential = true
	if got := errorText(err); !strings.Contains(got, "export VISOR_CREDENTIAL=file:") {
		t.Fatalf("errorText without a credential = %q, want the export line", got)
	}
}
