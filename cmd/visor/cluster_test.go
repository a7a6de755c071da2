package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
)

// clusterCLI runs `visor cluster ARGS` in-process against the shared
// server and returns its stdout.
func clusterCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := visor(t, append([]string{"cluster"}, args...)...)
	return out, err
}

func mustClusterCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := clusterCLI(t, args...)
	require.NoError(t, err, "visor cluster %v: %s", args, out)
	return out
}

func TestClusterCommandsEnrollOperateAndReport(t *testing.T) {
	// Enroll prints the token once, in table form and as JSON.
	out := mustClusterCLI(t, "enroll", "cli-east", "--provider", "sim", "--region", "us-east", "--residency", "us-only", "--metrics-label", "prom-cli-east")
	require.Contains(t, out, "cluster cli-east enrolled (phase pending)")
	require.Contains(t, out, contract.TokenPrefix)
	require.Contains(t, mustClusterCLI(t, "enroll", "cli-east", "--provider", "sim"), "cluster cli-east is already enrolled")
	// Enrolling again gives a cluster enrolled before cluster workflows had
	// a priority of their own that priority, once.
	require.NoError(t, starter.SetClusterPriority(t.Context(), env.client, env.namespace, "cli-east", 3, "test"))
	require.Contains(t, mustClusterCLI(t, "enroll", "cli-east", "--provider", "sim"), "cluster cli-east enrolled before cluster workflows ran ahead of their pools: its task priority is now 1")
	require.NotContains(t, mustClusterCLI(t, "enroll", "cli-east", "--provider", "sim"), "task priority")

	var enrolledWest enrolled
	require.NoError(t, json.Unmarshal([]byte(mustClusterCLI(t, "enroll", "cli-west", "--provider", "sim", "--phase", "active", "-o", "json")), &enrolledWest))
	require.True(t, enrolledWest.Created)
	require.True(t, strings.HasPrefix(enrolledWest.Token, contract.TokenPrefix))
	require.True(t, strings.HasPrefix(enrolledWest.Fingerprint, "sha256:"))

	// The fixture's sim-cli carries the default label "sim-cli".
	_, err := clusterCLI(t, "enroll", "cli-dup", "--provider", "sim", "--metrics-label", "sim-cli")
	require.ErrorContains(t, err, `metricsLabel "sim-cli" is already used by cluster sim-cli`)
	_, err = clusterCLI(t, "enroll", "cli-x", "--provider", "sim", "--phase", "paused")
	require.ErrorContains(t, err, `phase "paused" is not one of`)
	_, err = clusterCLI(t, "enroll", "cli-x")
	require.ErrorContains(t, err, `required flag(s) "provider" not set`)
	_, err = clusterCLI(t, "describe", "cli-east", "-o", "xml")
	require.ErrorContains(t, err, `output format "xml" is not table, json or yaml`)

	// set-phase: refused without a reason, then done.
	_, err = clusterCLI(t, "set-phase", "cli-east", "active")
	require.ErrorContains(t, err, "cluster cli-east refused set-phase: reason is empty")
	require.Contains(t, mustClusterCLI(t, "set-phase", "cli-east", "active", "--reason", "ready"), "cluster cli-east is active")

	// set-tier: a tier that is not one of the two, no reason, then done;
	// describe shows the tier and who changed it.
	_, err = clusterCLI(t, "set-tier", "cli-east", "own")
	require.ErrorContains(t, err, `tier "own" is not one of managed, byo`)
	_, err = clusterCLI(t, "set-tier", "cli-east", "byo")
	require.ErrorContains(t, err, "cluster cli-east refused set-tier")
	require.Contains(t, mustClusterCLI(t, "set-tier", "cli-east", "byo", "--reason", "tenant account"), "cluster cli-east is billed byo from the next hour")
	out = mustClusterCLI(t, "describe", "cli-east")
	require.Regexp(t, `Billing tier:\s+byo`, out)
	require.Regexp(t, `Last tier change:\s+managed → byo .* tenant account`, out)

	// rotate-token into a file; report as the agent with it.
	file := filepath.Join(t.TempDir(), "east.token")
	out = mustClusterCLI(t, "rotate-token", "cli-east", "--reason", "hand to the agent", "--token-file", file)
	require.Contains(t, out, "written to "+file)
	require.NotContains(t, out, contract.TokenPrefix)
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	t.Setenv("CLI_EAST_TOKEN", strings.TrimSpace(string(raw)))
	out = mustClusterCLI(t, "report", "cli-east", "--token-env", "CLI_EAST_TOKEN", "--mig", "--rdma", "--agent-version", "agent/3", "--nodes", "7")
	require.Contains(t, out, "report accepted")
	t.Setenv("CLI_WRONG_TOKEN", enrolledWest.Token)
	_, err = clusterCLI(t, "report", "cli-east", "--token-env", "CLI_WRONG_TOKEN")
	require.ErrorContains(t, err, "cluster cli-east refused report-observed: report refused: signature does not verify")
	require.NotContains(t, err.Error(), enrolledWest.Token)
	_, err = clusterCLI(t, "report", "cli-east", "--token-env", "CLI_UNSET_TOKEN")
	require.ErrorContains(t, err, "environment variable CLI_UNSET_TOKEN is empty")

	// describe keeps the halves apart; YAML carries the same status.
	out = mustClusterCLI(t, "describe", "cli-east")
	for _, want := range []string{"Declared", "Phase:", "active", "Residency:", "us-only", "Observed", "Capabilities:", "MIG true, NVLink false, RDMA true", "agent/3"} {
		require.Contains(t, out, want)
	}
	var st contract.ClusterStatus
	require.NoError(t, yaml.Unmarshal([]byte(mustClusterCLI(t, "describe", "cli-east", "-o", "yaml")), &st))
	require.Equal(t, 7, st.Observed.Nodes)
	require.Equal(t, "ready", st.LastPhaseChange.Reason)

	// list shows every enrolled cluster, the fixture's too.
	var listed []starter.ClusterEntry
	eventually(t, 20*time.Second, "cli clusters listed", func() error {
		listed = nil
		if err := json.Unmarshal([]byte(mustClusterCLI(t, "list", "-o", "json")), &listed); err != nil {
			return err
		}
		if len(listed) < 3 {
			return os.ErrNotExist
		}
		return nil
	})
	byID := map[string]starter.ClusterEntry{}
	for _, e := range listed {
		byID[e.ID] = e
	}
	require.Contains(t, byID, "sim-cli")
	require.Equal(t, contract.PhaseActive, byID["cli-west"].Declared.Phase)
	require.NotNil(t, byID["cli-east"].Status)
	table := mustClusterCLI(t, "list")
	require.Regexp(t, `(?m)^CLUSTER\s+PHASE\s+REGION\s+PROVIDER\s+REACHABLE`, table)
	require.Regexp(t, `(?m)^cli-east\s+active\s+us-east\s+sim\s+false`, table)
}
