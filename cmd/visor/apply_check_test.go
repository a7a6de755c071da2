package main

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/starter"
)

// A file wrong for the platform is refused whole before anything starts,
// each problem named by file, pool index and field.
func TestPoolApplyChecksTheWholeFileAgainstThePlatform(t *testing.T) {
	const file = "testdata/apply-unplaceable.yaml"
	_, _, err := visor(t, "pool", "apply", "-f", file)
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"nothing applied:",
		file + ": pools[1] (pool/initech/audit/gdpr/sim/sim-cli): placement.residency: the pool requires \"eu-only\"; cluster sim-cli declares none",
		file + ": pools[2] (pool/initech/audit/elsewhere/aws/sim-cli): key.provider: the pool is on provider aws but cluster sim-cli is on sim",
		file + ": pools[3] (pool/initech/audit/byo/sim/sim-cli): providerTaskQueue \"tenant-initech\" is not a declared provider queue",
		file + ": pools[4] (pool/initech/audit/lost/sim/sim-nowhere): key.cluster: cluster sim-nowhere is not enrolled",
	} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, msg, "pools[0]")
	_, _, err = visor(t, "pool", "describe", "pool/initech/audit/fine/sim/sim-cli")
	require.ErrorContains(t, err, "is the ID right", "the file's good pool was started")

	// A declared queue passes that check (flag or environment); the rest still refuse.
	_, _, err = visor(t, "pool", "apply", "-f", file, "--provider-queues", "tenant-initech")
	require.NotContains(t, err.Error(), "providerTaskQueue")
	require.Contains(t, err.Error(), "placement.residency")
	t.Setenv(providerQueuesEnv, "other, tenant-initech")
	_, _, err = visor(t, "pool", "apply", "-f", file)
	require.NotContains(t, err.Error(), "providerTaskQueue")

	// Typos are caught before the server is asked, with line and suggestion.
	_, _, err = visor(t, "pool", "apply", "-f", "testdata/apply-typo.yaml")
	require.ErrorContains(t, err, `testdata/apply-typo.yaml: unknown field "idelWindow" in pools[1].policy of pool/initech/audit/typo/sim/sim-cli (line 7); did you mean "idleWindow"?`)
}

// A failure mid-apply names exactly what was applied, what failed and
// what was never attempted.
func TestApplyReportNamesWhatWasApplied(t *testing.T) {
	outcomes, err := summarizeApply([]starter.PoolApplied{
		{Pool: "pool/a/b/one/sim/c", Attempted: true, Result: starter.PoolCreated},
		{Pool: "pool/a/b/two/sim/c", Attempted: true, Err: errors.New("server unavailable")},
		{Pool: "pool/a/b/three/sim/c", Attempted: true, Result: starter.PoolUnchanged},
		{Pool: "pool/a/b/four/sim/c"},
	})
	require.EqualError(t, err, "1 of 4 pools not applied:\nserver unavailable\n"+
		"applied: pool/a/b/one/sim/c, pool/a/b/three/sim/c\n"+
		"not attempted (after the failure): pool/a/b/four/sim/c")
	require.Equal(t, []applyOutcome{
		{Pool: "pool/a/b/one/sim/c", Result: "created"},
		{Pool: "pool/a/b/two/sim/c", Result: "failed", Error: "server unavailable"},
		{Pool: "pool/a/b/three/sim/c", Result: "unchanged"},
		{Pool: "pool/a/b/four/sim/c", Result: "not attempted"},
	}, outcomes)
	_, err = summarizeApply([]starter.PoolApplied{{Pool: "pool/a/b/one/sim/c", Attempted: true, Result: starter.PoolCreated}})
	require.NoError(t, err)
}

func TestApplyFlagsAndProgressOnlyOnATerminal(t *testing.T) {
	_, _, err := visor(t, "pool", "apply", "-f", "testdata/apply.yaml", "--concurrency", "0")
	require.ErrorContains(t, err, "--concurrency 0: apply at least 1 pool at once")
	var buf bytes.Buffer
	require.Nil(t, progressWriter(&buf), "a buffer is no terminal")
	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	defer f.Close()
	require.Nil(t, progressWriter(f), "a file is no terminal")
	require.Equal(t, []string{"a", "b"}, splitList(" a, ,b ,"))

	help, _, err := visorWith(t, "pool", "scale", "--help")
	require.NoError(t, err)
	require.Contains(t, help, "Without --hold a manual target does not hold: the control law takes over again")
}
