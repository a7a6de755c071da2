package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite/pgtemporal"
	"github.com/hanzoai/visor-fleet/types"
)

// TestWorkerAndCLIOnTemporalWithPostgreSQL is the production shape: a
// Temporal server persisting to PostgreSQL, `visor worker` as its own
// process with a clusters file, and the CLI. Pools scale, a worker restart
// resumes them, and the search attributes answer `pool list`.
func TestWorkerAndCLIOnTemporalWithPostgreSQL(t *testing.T) {
	started := time.Now()
	pg := pgtemporal.StartPostgres(t)
	srv := pgtemporal.StartTemporal(t, pg, "visor")
	t.Logf("PostgreSQL and Temporal up in %s", time.Since(started).Round(time.Millisecond))
	dir := t.TempDir()

	// The simulated cluster the worker serves, with demand for one pool,
	// written to the state file the worker's sim loads (and saves on exit).
	const cluster = "sim-pg"
	api := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: cluster}
	statePath := filepath.Join(dir, "sim-pg.json")
	seed, err := sim.New(sim.Config{Cluster: cluster, Provider: "sim", StatePath: statePath})
	require.NoError(t, err)
	require.NoError(t, seed.AddDemand(api, sim.DemandProfile{Shape: sim.ShapeSteady, Pods: 5, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}))

	tokenPath := filepath.Join(dir, "sim-pg.token")
	clustersPath := filepath.Join(dir, "clusters.yaml")
	require.NoError(t, os.WriteFile(clustersPath, fmt.Appendf(nil, `clusters:
  - id: %s
    provider: sim
    enrollmentToken: file:%s
    sim: {tick: 200ms, provisionDelay: 1s, statePath: %s}
`, cluster, tokenPath, statePath), 0o600))
	poolsPath := filepath.Join(dir, "pools.yaml")
	require.NoError(t, os.WriteFile(poolsPath, fmt.Appendf(nil, `pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: %[1]s}
    policy: &fast {minNodes: 1, maxNodes: 6, pendingThreshold: 2s, idleWindow: 5m, scaleUpCooldown: 2s, scaleDownCooldown: 3s, sampleInterval: 1s, resyncInterval: 15s, drainTimeout: 20s}
  - key: {org: globex, project: ml, service: train, provider: sim, cluster: %[1]s}
    policy: *fast
`, cluster), 0o600))

	conn := []string{"--address", srv.Address, "--namespace", srv.Namespace}
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := visorWith(t, append(conn, args...)...)
		require.NoError(t, err, "visor %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, stderr)
		return out
	}
	describe := func() poolDescription {
		t.Helper()
		var d poolDescription
		require.NoError(t, json.Unmarshal([]byte(cli("pool", "describe", api.WorkflowID(), "--decisions", "0", "-o", "json")), &d))
		return d
	}
	waitPool := func(timeout time.Duration, what string, cond func(poolDescription) bool) poolDescription {
		t.Helper()
		var d poolDescription
		eventually(t, timeout, what, func() error {
			out, stderr, err := visorWith(t, append(conn, "pool", "describe", api.WorkflowID(), "--decisions", "0", "-o", "json")...)
			if err != nil {
				return fmt.Errorf("%v: %s", err, stderr)
			}
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				return err
			}
			if !cond(d) {
				return fmt.Errorf("state=%s nodes=%d target=%d pending=%d seq=%d", d.State, d.Nodes, d.TargetNodes, d.PendingPods, d.Seq)
			}
			return nil
		})
		return d
	}

	worker := startWorkerProcess(t, append(conn, "worker", "--register-search-attributes", "--clusters", clustersPath)...)
	// The frontend learns new search attributes when its namespace cache
	// refreshes (1s here), a moment after the operator service lists them.
	eventually(t, 15*time.Second, "cluster enrolled", func() error {
		out, stderr, err := visorWith(t, append(conn, "cluster", "enroll", cluster, "--provider", "sim", "--phase", "active",
			"--region", "us-east", "--sample-interval", "1s", "--token-file", tokenPath)...)
		if err != nil {
			return fmt.Errorf("%v\n%s%s", err, out, stderr)
		}
		return nil
	})
	cli("pool", "apply", "-f", poolsPath)

	// The floor's purchase may size the pods too (they are pending from the
	// first observation, and batching buys for them within a second): one
	// node that holds all five is as right as two.
	up := waitPool(90*time.Second, "scaled up for 5 pods of 900m", func(d poolDescription) bool {
		return d.PendingPods == 0 && d.Nodes >= 1 && d.Seq >= 1
	})
	t.Logf("scaled up to %d nodes at %s", up.Nodes, time.Since(started).Round(time.Millisecond))

	// Visibility on PostgreSQL: the lists come from the search attributes.
	var acme, all []starter.PoolSummary
	eventually(t, 20*time.Second, "pool list by VisorOrg", func() error {
		require.NoError(t, json.Unmarshal([]byte(cli("pool", "list", "--org", "acme", "-o", "json")), &acme))
		require.NoError(t, json.Unmarshal([]byte(cli("pool", "list", "--cluster", cluster, "-o", "json")), &all))
		if len(acme) != 1 || len(all) != 2 || acme[0].Nodes != int64(up.Nodes) {
			return fmt.Errorf("acme %+v, all %+v", acme, all)
		}
		return nil
	})
	assert.Equal(t, api.WorkflowID(), acme[0].ID)
	// And it all is in PostgreSQL: both pools and the cluster, with history.
	for prefix, want := range map[string]int64{"pool/": 2, "cluster/": 1} {
		open, err := pg.QueryInt("temporal_visibility", "SELECT count(*) FROM executions_visibility WHERE status = 1 AND workflow_id LIKE $1", prefix+"%")
		require.NoError(t, err)
		assert.Equal(t, want, open, "running %s* workflows in PostgreSQL visibility", prefix)
	}
	events, err := pg.QueryInt("temporal", "SELECT count(*) FROM history_node")
	require.NoError(t, err)
	assert.Greater(t, events, int64(10), "history batches in PostgreSQL")

	// Restart the worker: the pool's workflow and the sim's nodes carry on.
	before := describe() // a query needs a worker
	worker.stop(t)
	worker = startWorkerProcess(t, append(conn, "worker", "--clusters", clustersPath)...)
	cli("pool", "scale", api.WorkflowID(), "--to", fmt.Sprint(before.Nodes+1), "--reason", "postgres test: after restart")
	after := waitPool(60*time.Second, "one more node after the restart", func(d poolDescription) bool {
		return d.Nodes == before.Nodes+1 && d.PendingPods == 0
	})
	require.NotEmpty(t, before.Decisions)
	assert.Equal(t, before.RunID, after.RunID, "the same run resumed, not a new pool")
	assert.Equal(t, before.Decisions[0].Seq, after.Decisions[0].Seq, "decision log kept")
	assert.Greater(t, after.Seq, before.Seq)
	worker.stop(t)
	t.Logf("whole test %s", time.Since(started).Round(time.Millisecond))
}

// workerProcess is `visor worker` run as its own process (this test
// binary acting as visor), its output in a file shown on failure.
type workerProcess struct {
	cmd     *exec.Cmd
	logPath string
	done    chan error
}

func startWorkerProcess(t *testing.T, args ...string) *workerProcess {
	t.Helper()
	logFile, err := os.CreateTemp(t.TempDir(), "worker-*.log")
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsCLI+"=1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	w := &workerProcess{cmd: cmd, logPath: logFile.Name(), done: make(chan error, 1)}
	go func() { w.done <- cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() {
			b, _ := os.ReadFile(w.logPath)
			t.Logf("worker %d output:\n%s", cmd.Process.Pid, b)
		}
	})
	// It says so once the search attributes are in and it polls.
	eventually(t, 60*time.Second, "worker polling", func() error {
		select {
		case err := <-w.done:
			w.done <- err
			b, _ := os.ReadFile(w.logPath)
			return fmt.Errorf("worker exited: %v\n%s", err, b)
		default:
		}
		f, err := os.Open(w.logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		for sc := bufio.NewScanner(f); sc.Scan(); {
			if strings.HasPrefix(sc.Text(), "visor worker polling") {
				return nil
			}
		}
		return fmt.Errorf("no polling line yet")
	})
	return w
}

// stop interrupts the worker as Ctrl-C or a pod's SIGTERM would; it must
// exit cleanly (the sim saves its state on the way out).
func (w *workerProcess) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-w.done:
		require.NoError(t, err, "worker exit")
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not exit within 30s of SIGINT")
	}
}
