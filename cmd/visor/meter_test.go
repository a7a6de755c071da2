package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/types"
)

// ledgerWith writes node-hour events for two managed pools over three
// hours, and management-plane pool-hours for one BYO pool of acme's.
func ledgerWith(t *testing.T) (path string, h0 time.Time) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "meter.db")
	l, err := meterledger.Open(path)
	require.NoError(t, err)
	defer l.Close()
	h0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	// The old shape (dimensions only), as a worker before tiers sends it.
	event := func(k types.PoolKey, size string, hour time.Time, v float64) metering.Event {
		return metering.Event{
			MeterID: metering.MeterNodeHours, UserID: k.Org, Value: v, Hour: hour,
			Idempotency: metering.IdempotencyKey(k, size, hour),
			Dimensions:  map[string]string{metering.DimPool: k.WorkflowID(), metering.DimSize: size},
		}
	}
	acme := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}
	globex := types.PoolKey{Org: "globex", Project: "ml", Service: "train", Provider: "sim", Cluster: "east"}
	byo := types.PoolKey{Org: "acme", Project: "web", Service: "batch", Provider: "sim", Cluster: "tenant-acme"}
	tl := metering.Timeline{}
	require.NoError(t, tl.Record("sim-small", 4, h0))
	tiers := metering.Tiers{Start: h0.Add(30 * time.Minute), Changes: []metering.TierChange{{Tier: contract.TierBYO, From: h0.Add(30 * time.Minute)}}}
	events := []metering.Event{
		event(acme, "sim-small", h0, 2),
		event(acme, "sim-small", h0.Add(time.Hour), 2.5),
		event(acme, "sim-large", h0.Add(time.Hour), 1),
		event(globex, "sim-small", h0.Add(2*time.Hour), 3),
	}
	for i := range 2 {
		events = append(events, metering.EventsForTieredHour(byo, tl, tiers, h0.Add(time.Duration(i)*time.Hour))...)
	}
	_, err = l.Insert(context.Background(), events)
	require.NoError(t, err)
	return path, h0
}

func TestMeterList(t *testing.T) {
	path, _ := ledgerWith(t)
	out := mustVisor(t, "meter", "list", "--ledger", path)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Regexp(t, `^HOUR\s+TIER\s+METER\s+ORG\s+POOL\s+SIZE\s+VALUE$`, lines[0])
	require.Regexp(t, `^2025-03-01T10Z\s+managed\s+node-hours\s+acme\s+pool/acme/web/api/sim/east\s+sim-small\s+2.000 node-h$`, lines[1])
	require.Regexp(t, `(?m)^2025-03-01T10Z\s+byo\s+management-plane.pool-hours\s+acme\s+pool/acme/web/batch/sim/tenant-acme\s+-\s+0.500 pool-h$`, out)
	// header, 6 rows, blank + pool totals header, 4 pool totals, blank + org totals header, 3 org totals
	require.Len(t, lines, 1+6+2+4+2+3, out)
	require.Regexp(t, `(?m)^2 h\s+managed\s+node-hours\s+acme\s+pool/acme/web/api/sim/east\s+sim-small\s+4.500 node-h$`, out)
	// Per org and meter: acme's BYO pool-hours are never added to its node-hours.
	require.Regexp(t, `(?m)^2 h\s+byo\s+management-plane.pool-hours\s+acme\s+1\s+1.500 pool-h$`, out)
	require.Regexp(t, `(?m)^3 h\s+managed\s+node-hours\s+acme\s+1\s+5.500 node-h$`, out)
	require.Regexp(t, `(?m)^1 h\s+managed\s+node-hours\s+globex\s+1\s+3.000 node-h$`, out)

	var report meterReport
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "meter", "list", "--ledger", path, "--org", "acme", "-o", "json")), &report))
	require.Len(t, report.Rows, 5)
	require.Equal(t, []meterTotal{
		{Org: "acme", Tier: "byo", Meter: metering.MeterPoolHours, Pool: "pool/acme/web/batch/sim/tenant-acme", Hours: 2, Value: 1.5},
		{Org: "acme", Tier: "managed", Meter: metering.MeterNodeHours, Pool: "pool/acme/web/api/sim/east", Size: "sim-large", Hours: 1, Value: 1},
		{Org: "acme", Tier: "managed", Meter: metering.MeterNodeHours, Pool: "pool/acme/web/api/sim/east", Size: "sim-small", Hours: 2, Value: 4.5},
	}, report.Totals)
	require.Equal(t, []meterOrgTotal{
		{Org: "acme", Tier: "byo", Meter: metering.MeterPoolHours, Pools: 1, Hours: 2, Value: 1.5},
		{Org: "acme", Tier: "managed", Meter: metering.MeterNodeHours, Pools: 1, Hours: 3, Value: 5.5},
	}, report.OrgTotals)
	for _, r := range report.Rows {
		if r.Tier == "byo" {
			require.Equal(t, "tenant-acme", r.Cluster)
			require.Equal(t, "web", r.Project)
			require.Empty(t, r.Size)
		}
	}

	// [from, to) on hours, and the pool and tier filters.
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "meter", "list", "--ledger", path, "--from", "2025-03-01T11", "--to", "2025-03-01T12:00:00Z", "--tier", "managed", "-o", "json")), &report))
	require.Len(t, report.Rows, 2)
	for _, r := range report.Rows {
		require.Equal(t, "2025-03-01T11:00:00Z", r.Hour.Format(time.RFC3339))
	}
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "meter", "list", "--ledger", path, "--pool", "pool/globex/ml/train/sim/east", "--from", "2025-03-01", "-o", "json")), &report))
	require.Len(t, report.Rows, 1)
	require.Equal(t, 3.0, report.Rows[0].Value)
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "meter", "list", "--ledger", path, "--meter", metering.MeterPoolHours, "-o", "json")), &report))
	require.Len(t, report.Rows, 2)
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "meter", "list", "--ledger", path, "--limit", "1", "-o", "json")), &report))
	require.Len(t, report.Rows, 1)
	require.Len(t, report.Totals, 4, "totals ignore --limit")
}

func TestMeterListRejectsBadInput(t *testing.T) {
	path, _ := ledgerWith(t)
	missing := filepath.Join(t.TempDir(), "nope.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ledger", missing}, "ledger " + missing + " does not exist"},
		{[]string{"--ledger", path, "--from", "yesterday"}, `"yesterday" is not a time like`},
		{[]string{"--ledger", path, "--from", "2025-03-02", "--to", "2025-03-01"}, "filter: to 2025-03-01T00:00:00Z is not after from 2025-03-02T00:00:00Z"},
		{[]string{"--ledger", path, "--org", "ACME"}, `--org "ACME" is not a lower-case DNS label`},
		{[]string{"--ledger", path, "--pool", "acme/web"}, `--pool: pool ID "acme/web" must look like`},
		{[]string{"--ledger", path, "--limit", "-1"}, "filter: limit -1 is negative"},
		{[]string{"--ledger", path, "--tier", "free"}, `--tier "free" is not one of managed, byo`},
		{[]string{"--ledger", path, "--meter", "cpu"}, `--meter "cpu" is not one of visor.node-hours`},
		{[]string{"--ledger", path, "-o", "csv"}, `output format "csv" is not table, json or yaml`},
	} {
		_, _, err := visor(t, append([]string{"meter", "list"}, c.args...)...)
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}
	_, err := os.Stat(missing)
	require.ErrorIs(t, err, os.ErrNotExist, "listing a missing ledger must not create it")
}

// An empty ledger says why it is empty and when the first rows appear.
func TestMeterListExplainsTheOpenHour(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meter.db")
	l, err := meterledger.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	open := time.Now().UTC().Truncate(time.Hour)
	stdout, stderr, err := visor(t, "meter", "list", "--ledger", path)
	require.NoError(t, err)
	require.NotContains(t, stdout, "HOUR", "no empty tables before the first hour")
	require.Empty(t, stderr)
	require.True(t, strings.HasPrefix(stdout, "no complete hour metered yet: node-hours are billed per complete UTC hour. The open hour "+open.Format("15:04Z")+"–"), stdout)
	require.Contains(t, stdout, "is accruing, not yet billed; its rows appear shortly after "+open.Add(time.Hour).Format("15:04Z"))

	var report meterReport
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "meter", "list", "--ledger", path, "-o", "json")), &report))
	require.Empty(t, report.Rows)
	require.True(t, report.OpenHour.Equal(open), "open hour %s", report.OpenHour)
	require.True(t, report.BilledAfter.Equal(open.Add(time.Hour)))

	// A range that ends before the open hour has nothing to say about it.
	_, stderr, err = visor(t, "meter", "list", "--ledger", path, "--to", "2025-03-01")
	require.NoError(t, err)
	require.Empty(t, stderr)
}
