package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// ForTest starts a cluster for one test and stops it when the test ends.
// Missing binaries skip the test on a developer's machine and fail it in CI
// (CI=true), where build-binaries.sh must have run.
func ForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	requireBinaries(t, opts)
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	showLogsOnFailure(t, c)
	return c
}

// shared is the one cluster a test package's tests use (Main and Shared).
var shared struct {
	once    sync.Once
	opts    Options
	cluster *Cluster
	err     error
	// beforeStop run, newest first, before Main stops the cluster.
	beforeStop []func()
}

// BeforeSharedStop registers f to run after the package's last test and
// before Main stops the shared cluster: to stop what uses the cluster
// (a worker watching it) while its API server still answers.
func BeforeSharedStop(f func()) { shared.beforeStop = append(shared.beforeStop, f) }

// Main runs a package's tests with one shared cluster, started by the first
// test that calls Shared and stopped after the last test. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m, kubeapi.Options{})) }
func Main(m *testing.M, opts Options) int {
	shared.opts = opts
	code := m.Run()
	for i := len(shared.beforeStop) - 1; i >= 0; i-- {
		shared.beforeStop[i]()
	}
	if shared.cluster != nil {
		shared.cluster.Stop()
	}
	return code
}

// Shared returns the package's shared cluster (see Main), with the same
// skip/fail rule as ForTest. Tests that use it share the server: each keeps
// to its own namespaces, node names and pool labels.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	requireBinaries(t, shared.opts)
	shared.once.Do(func() {
		shared.cluster, shared.err = Start(context.Background(), shared.opts)
		if shared.err == nil {
			fmt.Fprintf(os.Stderr, "kubeapi: control plane ready in %s\n", shared.cluster.StartedIn.Round(1e6))
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	showLogsOnFailure(t, shared.cluster)
	return shared.cluster
}

func requireBinaries(t testing.TB, opts Options) {
	t.Helper()
	_, err := FindBinaries(opts.OptionalBinaries()...)
	var missing *MissingBinariesError
	switch {
	case err == nil:
	case errors.As(err, &missing) && os.Getenv("CI") == "true":
		t.Fatalf("%v (CI must prepare the cache before the tests)", err)
	case errors.As(err, &missing):
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}

// showLogsOnFailure prints what the servers logged during a failed test.
func showLogsOnFailure(t testing.TB, c *Cluster) {
	offsets := c.LogOffsets()
	t.Cleanup(func() {
		if t.Failed() && c.Dir() != "" {
			t.Logf("control plane logs:\n%s", c.LogsSince(offsets, 60))
		}
	})
}
