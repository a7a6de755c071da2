package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/testsuite"
)

// TestRollingUpgrade is the multi-process deployment upgraded as a
// rolling update does it: every worker starts as the previous release
// ($VISOR_OLD_BIN, scripts/build-release.sh), which also enrolls the
// clusters and applies the pools; once every pool has decided, each
// worker in turn is stopped with SIGTERM and started again from this
// tree's binary, VISOR_UPGRADE_STEP apart, so old and new workers serve
// the task queues side by side for a while. Then every pool must decide
// again under the new workers alone, and the ground truth holds: no
// machine bought twice, no meter hour doubled or missing, no workflow
// task failed, one running run per workflow. make upgrade-cluster-test.
func TestRollingUpgrade(t *testing.T) {
	if os.Getenv("VISOR_CLUSTER_UPGRADE") != "1" {
		t.Skip("minutes of processes: run by make upgrade-cluster-test (VISOR_CLUSTER_UPGRADE=1, VISOR_OLD_BIN)")
	}
	old := os.Getenv("VISOR_OLD_BIN")
	if _, err := os.Stat(old); old == "" || err != nil {
		t.Fatalf("VISOR_OLD_BIN=%q: the previous release's visor binary is needed (scripts/build-release.sh builds it): %v", old, err)
	}
	shape := FleetShape{
		Pools:        testsuite.EnvInt(t, "VISOR_CLUSTER_POOLS", 30, 1),
		Clusters:     3,
		BurstShare:   0.3,
		TenantOrg:    orgs[0],
		Resync:       20 * time.Second,
		WorkerBinary: old,
	}
	step := testsuite.EnvDuration(t, "VISOR_UPGRADE_STEP", 20*time.Second)
	ctx := context.Background()

	d := Start(t, shape)
	took, notYet := d.decidedAgain(ctx, time.Now().Add(-d.ApplyTook), 4*time.Minute)
	require.Empty(t, notYet, "pools that never decided under the previous release")
	t.Logf("upgrade: every pool decided within %s of apply, workers on %s", took.Round(time.Second), old)

	began := time.Now()
	for _, w := range append(append([]*proc(nil), d.Workers...), d.Tenant) {
		time.Sleep(step)
		w.stop(30 * time.Second)
		w.path = d.visor
		require.NoError(t, w.start(), w.name)
		t.Logf("upgrade: %s restarted from the new binary at +%s [load %s]", w.name, time.Since(began).Round(time.Second), loadAverage())
	}
	at := time.Now()
	took, notYet = d.decidedAgain(ctx, at, 2*time.Minute)
	assert.Empty(t, notYet, "pools that did not decide again under the new workers")
	t.Logf("upgrade: rollout took %s; every pool decided again within %s of the last restart", at.Sub(began).Round(time.Second), took.Round(time.Second))

	// Let the rollout's retries and drains finish before the truth is read.
	time.Sleep(30 * time.Second)
	for _, p := range append(d.Workers, d.Tenant) {
		ok, why := p.alive()
		assert.True(t, ok, "%s: %s", p.name, why)
	}
	d.checkGroundTruth(ctx, t)
}
