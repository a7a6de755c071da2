package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
)

const (
	apiPool    = "pool/acme/web/api/sim/sim-cli"
	searchPool = "pool/acme/web/search/sim/sim-cli"
	trainPool  = "pool/globex/ml/train/sim/sim-cli"
)

func listJSON(t *testing.T, args ...string) []starter.PoolSummary {
	t.Helper()
	var pools []starter.PoolSummary
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, append([]string{"pool", "list", "-o", "json"}, args...)...)), &pools))
	return pools
}

func ids(pools []starter.PoolSummary) []string {
	out := make([]string, 0, len(pools))
	for _, p := range pools {
		out = append(out, p.ID)
	}
	return out
}

func describeJSON(t *testing.T, id string) contract.PoolStatus {
	t.Helper()
	var st contract.PoolStatus
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "pool", "describe", id, "-o", "json")), &st))
	return st
}

func TestPoolListFiltersBySearchAttributes(t *testing.T) {
	// Every fixture pool publishes its state; until then it lists as "starting".
	eventually(t, 30*time.Second, "every fixture pool published", func() error {
		for _, p := range listJSON(t, "--cluster", "sim-cli") {
			if p.State == "starting" || p.State == "" {
				return fmt.Errorf("%s is %q", p.ID, p.State)
			}
		}
		return nil
	})
	require.Equal(t, []string{apiPool, searchPool}, ids(listJSON(t, "--org", "acme")))
	require.Equal(t, []string{trainPool}, ids(listJSON(t, "--org", "globex", "--project", "ml", "--service", "train")))
	require.Empty(t, listJSON(t, "--org", "acme", "--provider", "aws"))
	require.Subset(t, ids(listJSON(t, "--provider", "sim", "--cluster", "sim-cli")), []string{apiPool, searchPool, trainPool})

	out := mustVisor(t, "pool", "list", "--org", "acme")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.Regexp(t, `^POOL\s+STATE\s+NODES\s+TARGET\s+PENDING\s+LAST SCALE\s+REASON$`, lines[0])
	require.Regexp(t, `^pool/acme/web/api/sim/sim-cli\s+\S+\s+\d+\s+\d+\s+\d+\s+`, lines[1])

	var fromYAML []starter.PoolSummary
	require.NoError(t, yaml.Unmarshal([]byte(mustVisor(t, "pool", "list", "--org", "globex", "-o", "yaml")), &fromYAML))
	require.Equal(t, []string{trainPool}, ids(fromYAML))
	require.Equal(t, "Running", fromYAML[0].Status)
}

func TestPoolListRejectsBadFilters(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--org", "Acme"}, `org "Acme" is not a lower-case DNS label`},
		{[]string{"--cluster", "x' OR '1'='1"}, `cluster "x' OR '1'='1" is not a lower-case DNS label`},
		{[]string{"--state", "stedy"}, `state "stedy" is not one of starting, steady`},
		{[]string{"-o", "xml"}, `output format "xml" is not table, json or yaml`},
		{[]string{"extra"}, `unknown command "extra"`},
	} {
		_, _, err := visor(t, append([]string{"pool", "list"}, c.args...)...)
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}
}

func TestPoolDescribe(t *testing.T) {
	st := describeJSON(t, trainPool)
	require.Equal(t, "globex", st.Key.Org)
	require.Equal(t, 6, st.Policy.MaxNodes)
	require.Contains(t, starter.PoolStates, st.State)

	human := mustVisor(t, "pool", "describe", trainPool)
	require.Contains(t, human, "Pool:              "+trainPool)
	require.Regexp(t, `Nodes:\s+\d+ observed, target \d+ \(floor 1, ceiling 6\)`, human)
	require.Regexp(t, `Cluster:\s+sim-cli \(active, reachable\)`, human)

	var fromYAML contract.PoolStatus
	require.NoError(t, yaml.Unmarshal([]byte(mustVisor(t, "pool", "describe", trainPool, "-o", "yaml")), &fromYAML))
	require.Equal(t, st.Key, fromYAML.Key)

	_, _, err := visor(t, "pool", "describe", "pool/acme/web/nope/sim/sim-cli")
	require.ErrorContains(t, err, "pool/acme/web/nope/sim/sim-cli: ")
	require.ErrorContains(t, err, "is the ID right")
	_, _, err = visor(t, "pool", "describe", "acme/web/api")
	require.ErrorContains(t, err, `pool ID "acme/web/api" must look like pool/<org>/<project>/<service>/<provider>/<cluster>`)
	_, _, err = visor(t, "pool", "describe")
	require.ErrorContains(t, err, "accepts 1 arg(s), received 0")
}

func TestPoolScaleThroughTheValidator(t *testing.T) {
	_, _, err := visor(t, "pool", "scale", apiPool, "--to", "99", "--reason", "too many")
	require.ErrorContains(t, err, apiPool+" refused scale: target 99 is outside [minNodes 1, maxNodes 6]")
	_, _, err = visor(t, "pool", "scale", apiPool, "--to", "2")
	require.ErrorContains(t, err, "refused scale: reason is empty")
	_, _, err = visor(t, "pool", "scale", apiPool, "--reason", "no target")
	require.ErrorContains(t, err, `required flag(s) "to" not set`)
	_, _, err = visor(t, "pool", "scale", "pool/acme/web/API/sim/sim-cli", "--to", "2", "--reason", "x")
	require.ErrorContains(t, err, `service "API" is not a lower-case DNS label`)
	before := describeJSON(t, apiPool)
	require.Equal(t, 1, before.TargetNodes, "rejected updates changed nothing")

	// Held, so the fixture's short idle window cannot take the new node
	// before the test sees it (without --hold the law takes over at once).
	out := mustVisor(t, "pool", "scale", apiPool, "--to", "2", "--reason", "launch day", "--requested-by", "ops@acme", "--hold", "2m")
	require.Regexp(t, `^`+apiPool+`: scale accepted as decision #\d+: 1 → 2 nodes \(launch day\)`, out)
	eventually(t, 30*time.Second, "api pool at 2 nodes", func() error {
		st := describeJSON(t, apiPool)
		if st.Nodes != 2 {
			return fmt.Errorf("nodes %d, decisions %+v", st.Nodes, st.Decisions)
		}
		last := st.Decisions[len(st.Decisions)-1]
		if last.Action != "manual-scale-up" || last.RequestedBy != "ops@acme" {
			return fmt.Errorf("last decision %+v", last)
		}
		return nil
	})

	var acc contract.ScaleAccepted
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "pool", "scale", apiPool, "--to", "1", "--reason", "back to floor", "-o", "json")), &acc))
	require.Equal(t, 1, acc.Target)
	require.Equal(t, 2, acc.From)
}

func TestPoolPauseAndResume(t *testing.T) {
	out := mustVisor(t, "pool", "pause", trainPool, "--reason", "maintenance", "--requested-by", "ops")
	require.Regexp(t, `^`+trainPool+`: paused \(state paused, \d+ nodes?\)\n$`, out)
	st := describeJSON(t, trainPool)
	require.True(t, st.Paused)
	require.Equal(t, "maintenance (by ops)", st.PausedReason)
	require.Contains(t, mustVisor(t, "pool", "describe", trainPool), "Paused:            yes (by ops): maintenance")
	eventually(t, 20*time.Second, "the list's --state paused shows it", func() error {
		if got := ids(listJSON(t, "--state", "paused")); len(got) != 1 || got[0] != trainPool {
			return fmt.Errorf("paused pools %v", got)
		}
		// The table says why, without a query to the pool.
		table := mustVisor(t, "pool", "list", "--state", "paused")
		if !regexp.MustCompile(`(?m)^POOL\s+STATE\s+NODES\s+TARGET\s+PENDING\s+LAST SCALE\s+REASON$`).MatchString(table) ||
			!regexp.MustCompile(`(?m)^`+trainPool+`\s+paused\s+.*\s+paused: maintenance \(by ops\)$`).MatchString(table) {
			return fmt.Errorf("list table:\n%s", table)
		}
		return nil
	})

	var resumed contract.PoolStatus
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "pool", "resume", trainPool, "-o", "json")), &resumed))
	require.False(t, resumed.Paused)
	require.NotEqual(t, "paused", resumed.State)

	_, _, err := visor(t, "pool", "pause", "pool/acme/web/nope/sim/sim-cli", "--reason", "x")
	require.ErrorContains(t, err, "pool/acme/web/nope/sim/sim-cli: ")
}

func TestExitStatusAndMessageOfARefusal(t *testing.T) {
	stdout, stderr, code := visorProcess(t, "pool", "scale", apiPool, "--to", "0", "--reason", "below floor")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "visor: "+apiPool+" refused scale: target 0 is outside [minNodes 1, maxNodes 6]\n", stderr)

	stdout, _, code = visorProcess(t, "pool", "list", "--org", "globex", "-o", "json")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(stdout, "["), "stdout is pure JSON, no SDK log lines: %q", stdout)
}

func TestConnectionFromEnvironmentAndErrors(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", env.address)
	t.Setenv("TEMPORAL_NAMESPACE", env.namespace)
	out, _, err := visorWith(t, "pool", "list", "--org", "globex")
	require.NoError(t, err)
	require.Contains(t, out, trainPool)

	_, _, err = visorWith(t, "--namespace", "no-such-namespace", "pool", "list")
	require.ErrorContains(t, err, "no-such-namespace")

	start := time.Now()
	_, _, err = visorWith(t, "--address", "127.0.0.1:1", "pool", "list")
	require.ErrorContains(t, err, "connect to Temporal at 127.0.0.1:1")
	require.Less(t, time.Since(start), dialTimeout+5*time.Second)
}

func TestShellCompletion(t *testing.T) {
	out, _, err := visorWith(t, "completion", "bash")
	require.NoError(t, err)
	require.Contains(t, out, "__start_visor")
	// Dynamic completion of pool IDs asks the server.
	out = mustVisor(t, "__complete", "pool", "describe", "pool/acme/")
	require.Contains(t, out, apiPool+"\n")
	require.Contains(t, out, searchPool+"\n")
	require.NotContains(t, out, trainPool)
	out = mustVisor(t, "__complete", "pool", "list", "--state", "")
	require.Contains(t, out, "idle-nodes\n")
}
