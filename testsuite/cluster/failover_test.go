package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/testsuite"
)

func TestMain(m *testing.M) {
	ServiceMain() // a re-executed service process never returns from here
	os.Exit(m.Run())
}

// Targets from issue 29.
const (
	workerKillTarget  = 60 * time.Second
	historyKillTarget = 120 * time.Second
)

// TestFailover runs the multi-process deployment with bursty demand,
// kills a platform worker (and restarts it) VISOR_CLUSTER_WORKER_KILLS
// times and the history service VISOR_CLUSTER_HISTORY_KILLS times, times
// each until every pool has decided again, then checks the fleet from
// ground truth: the sim host's clouds, the shared meter ledger and every
// workflow history. CI runs 100 pools; the measurement is
// VISOR_CLUSTER_POOLS=1000 (make cluster-test CLUSTER_POOLS=1000).
func TestFailover(t *testing.T) {
	if os.Getenv("VISOR_CLUSTER_TEST") != "1" {
		t.Skip("minutes of processes being killed: run by make cluster-test (VISOR_CLUSTER_TEST=1), which CI runs after make test")
	}
	shape := FleetShape{
		Pools:      testsuite.EnvInt(t, "VISOR_CLUSTER_POOLS", 100, 1),
		BurstShare: 0.2,
		TenantOrg:  orgs[0],
		Resync:     testsuite.EnvDuration(t, "VISOR_CLUSTER_RESYNC", 20*time.Second),
	}
	resync := failoverPolicy(shape.Resync).ResyncInterval.D()
	// An idle pool decides again at its next resync at the latest: the
	// waits stretch with a longer one.
	slack := resync - 20*time.Second
	shape.Clusters = testsuite.EnvInt(t, "VISOR_CLUSTER_CLUSTERS", max(3, shape.Pools/100+1), 2)
	workerKills := testsuite.EnvInt(t, "VISOR_CLUSTER_WORKER_KILLS", 2, 0)
	historyKills := testsuite.EnvInt(t, "VISOR_CLUSTER_HISTORY_KILLS", 1, 0)
	every := testsuite.EnvDuration(t, "VISOR_CLUSTER_KILL_EVERY", 40*time.Second)
	ctx := context.Background()

	d := Start(t, shape)
	applied := time.Now()
	took, notYet := d.decidedAgain(ctx, applied.Add(-d.ApplyTook), 4*time.Minute+2*slack)
	require.Empty(t, notYet, "pools that never decided after apply")
	t.Logf("cluster: every pool decided within %s of apply", took.Round(time.Second))
	d.checkWebUI(t)

	base := time.Now()
	baseline, notYet := d.decidedAgain(ctx, base, 2*time.Minute+2*slack)
	require.Empty(t, notYet, "pools that did not decide again with nothing killed")
	t.Logf("cluster: baseline, nothing killed: every pool decided again within %s (resync every %s)", baseline.Round(100*time.Millisecond), resync)

	var kills []kill
	for i := range workerKills {
		time.Sleep(every)
		w := d.Workers[i%len(d.Workers)]
		k := kill{What: w.name + " (kill -9, restarted after 10s)", At: time.Now(), Limit: workerKillTarget + slack}
		w.kill()
		restarted := make(chan error, 1)
		go func() { time.Sleep(10 * time.Second); restarted <- w.start() }()
		k.Decided, k.NotYet = d.decidedAgain(ctx, k.At, 3*workerKillTarget+slack)
		require.NoError(t, <-restarted)
		t.Logf("cluster: %s [load %s]", k, loadAverage())
		kills = append(kills, k)
	}
	for range historyKills {
		time.Sleep(every)
		h := d.Services["history"]
		k := kill{What: "temporal history service (kill -9, restarted at once)", At: time.Now(), Limit: historyKillTarget + slack}
		h.kill()
		require.NoError(t, h.start())
		d.waitLog(h, "service up", 2*time.Minute)
		k.Decided, k.NotYet = d.decidedAgain(ctx, k.At, 3*historyKillTarget+slack)
		t.Logf("cluster: %s [load %s]", k, loadAverage())
		kills = append(kills, k)
	}

	// Let the last kill's retries and drains finish before the truth is read.
	time.Sleep(30 * time.Second)
	for name, p := range d.Services {
		ok, why := p.alive()
		assert.True(t, ok, "temporal %s: %s", name, why)
	}
	for _, p := range append(d.Workers, d.Tenant) {
		ok, why := p.alive()
		assert.True(t, ok, "%s: %s", p.name, why)
	}
	d.checkGroundTruth(ctx, t)
	// Every pool must decide again within 3× the target (a pool
	// stuck behind a dead worker fails here); the target itself is held
	// with VISOR_CLUSTER_ENFORCE_TARGETS=1 and reported otherwise: met on
	// a quiet machine (docs/scale.md), missed when 2 cores are shared
	// with other builds, which CI's machine may be.
	enforce := os.Getenv("VISOR_CLUSTER_ENFORCE_TARGETS") == "1"
	for _, k := range kills {
		assert.Empty(t, k.NotYet, "%s", k)
		if k.Decided > k.Limit {
			if enforce {
				t.Errorf("target missed: %s", k)
			} else {
				t.Logf("cluster: TARGET MISSED: %s [load %s]", k, loadAverage())
			}
		}
	}
}

// checkGroundTruth reads the sim host's clouds, the shared meter ledger
// and every workflow history, and fails t on each invariant broken: no
// machine or group bought twice, no meter hour doubled or missing, no
// workflow task failed, one running run per workflow, one watcher each.
func (d *Deployment) checkGroundTruth(ctx context.Context, t *testing.T) {
	t.Helper()
	v := violations{}
	machines := d.checkMachines(v)
	cursors := d.poolCursors(ctx, v)
	rows, err := d.checkLedger(ctx, v, cursors)
	require.NoError(t, err)
	fig, err := d.checkHistories(ctx, v)
	require.NoError(t, err)
	t.Logf("cluster: ground truth: %d machines, %d ledger rows, %d runs, %d events, %d workflow task timeouts (tasks a killed worker held), %d benign task failures, %d watcher handovers",
		machines, rows, fig.Runs, fig.Events, fig.TaskTimeouts, fig.BenignTaskFailures, fig.WatcherHandovers)
	for _, inv := range []string{invDuplicateMachine, invDuplicateGroup, invLedgerDoubled, invLedgerMissing, invTaskFailed, invRuns, invWatchers} {
		t.Logf("cluster: invariant %-45s %d violations", inv, len(v[inv]))
	}
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for i, s := range v[name] {
			if i == 20 {
				t.Errorf("%s: … and %d more", name, len(v[name])-i)
				break
			}
			t.Errorf("%s: %s", name, s)
		}
	}
}

// checkWebUI asks the Web UI's own API for the pools: it reaches the
// deployment's frontend.
func (d *Deployment) checkWebUI(t *testing.T) {
	// One page of a few: a page of 1,000 pools' executions outgrew the
	// 1 MiB read and never decoded.
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/namespaces/%s/workflows?query=%s&pageSize=5", d.layout.UIPort, namespace, "WorkflowType%3D%22PoolWorkflow%22")
	d.eventually(30*time.Second, "the Web UI lists pools", func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var list struct {
			Executions []struct {
				Execution struct {
					WorkflowID string `json:"workflowId"`
				} `json:"execution"`
			} `json:"executions"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil {
			return fmt.Errorf("%s: %s", resp.Status, firstLine(string(body)))
		}
		if len(list.Executions) == 0 || !strings.HasPrefix(list.Executions[0].Execution.WorkflowID, "pool/") {
			return fmt.Errorf("no pool in the Web UI's list: %.200s", body)
		}
		return nil
	})
}
