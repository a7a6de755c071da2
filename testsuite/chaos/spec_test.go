package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/starter"
)

func TestChaosSpecTurnsFaultsOnAtAboutThirtyPercent(t *testing.T) {
	c, err := loadChaosSpec("pools.yaml")
	require.NoError(t, err)
	require.Len(t, c.spec.Faults, 2)
	for id, f := range c.spec.Faults {
		cfg := f.FaultSpec
		// Calls failing before the provider, plus mutations whose answer is lost.
		rate := cfg.RetryableRate + cfg.RateLimitRate + cfg.CreateSucceedsButErrorsRate
		assert.InDelta(t, 0.30, rate, 0.05, id)
		assert.NotEmpty(t, cfg.InsufficientCapacitySizes, id)
		assert.Positive(t, cfg.NeverJoinsRate, id)
		assert.Positive(t, cfg.GoesNotReadyRate, id)
	}
	for _, p := range c.spec.Pools {
		require.NotNil(t, p.Demo, p.Key.WorkflowID())
	}
}

func TestWithSeedsReseedsEveryFaultedCluster(t *testing.T) {
	c, err := loadChaosSpec("pools.yaml")
	require.NoError(t, err)
	raw, err := c.withSeeds(700)
	require.NoError(t, err)
	f, err := starter.ParseSpecFile("rewritten", raw)
	require.NoError(t, err)
	assert.Equal(t, int64(700), f.Faults["sim-east"].Seed)
	assert.Equal(t, int64(701), f.Faults["sim-west"].Seed)
	// Nothing else moved: the pools and the other fault fields are as written.
	assert.Equal(t, c.spec.Pools, f.Pools)
	assert.Equal(t, c.spec.Faults["sim-east"].FaultSpec, f.Faults["sim-east"].FaultSpec)
}

func TestWithSeedsAddsASeedWhereNoneIsWritten(t *testing.T) {
	raw, err := os.ReadFile("pools.yaml")
	require.NoError(t, err)
	noSeed := strings.ReplaceAll(string(raw), "    seed: 2\n", "")
	require.NotEqual(t, string(raw), noSeed)
	path := filepath.Join(t.TempDir(), "pools.yaml")
	require.NoError(t, os.WriteFile(path, []byte(noSeed), 0o600))
	c, err := loadChaosSpec(path)
	require.NoError(t, err)
	out, err := c.withSeeds(5)
	require.NoError(t, err)
	f, err := starter.ParseSpecFile("rewritten", out)
	require.NoError(t, err)
	assert.Equal(t, int64(6), f.Faults["sim-west"].Seed)
}

func TestWithoutFaultsDropsOnlyTheFaults(t *testing.T) {
	c, err := loadChaosSpec("pools.yaml")
	require.NoError(t, err)
	raw, err := c.withoutFaults()
	require.NoError(t, err)
	f, err := starter.ParseSpecFile("rewritten", raw)
	require.NoError(t, err)
	assert.Empty(t, f.Faults)
	assert.Equal(t, c.spec.Pools, f.Pools)
	assert.Equal(t, c.spec.Clusters, f.Clusters)
}

func TestLoadChaosSpecRefusesWhatTheChecksCannotJudge(t *testing.T) {
	raw, err := os.ReadFile("pools.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	floorless := strings.Replace(string(raw), "minNodes: 2,", "minNodes: 0,", 1)
	require.NotEqual(t, string(raw), floorless)
	_, err = loadChaosSpec(write("floorless.yaml", floorless))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pools[2] (pool/globex/ml/inference/sim/sim-west): policy.minNodes is 0")

	calm := string(raw)[:strings.Index(string(raw), "\nfaults:")]
	_, err = loadChaosSpec(write("calm.yaml", calm))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no faults section")
}

func TestParseFlagsNamesTheBadFlag(t *testing.T) {
	_, err := parseFlags([]string{"-kills", "0", "-min-up", "10s", "-max-up", "5s", "-startup-share", "2"})
	require.Error(t, err)
	for _, want := range []string{"-kills: must be at least 1, got 0", "-min-up 10s and -max-up 5s", "-startup-share: must be within [0, 1], got 2"} {
		assert.Contains(t, err.Error(), want)
	}
	o, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, 50, o.plan.kills, "the default meets issue 13's at least 50 kills")
}
