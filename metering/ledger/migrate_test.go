package ledger

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/metering/meteringtest"
)

// ledgerSchemaV0 is the table as files written before tiers have it.
const ledgerSchemaV0 = `
CREATE TABLE meter_events (
	idempotency TEXT    NOT NULL UNIQUE,
	meter_id    TEXT    NOT NULL,
	org         TEXT    NOT NULL,
	pool        TEXT    NOT NULL,
	size        TEXT    NOT NULL,
	hour        INTEGER NOT NULL,
	value       REAL    NOT NULL,
	dimensions  TEXT    NOT NULL,
	recorded_at INTEGER NOT NULL
);
INSERT INTO meter_events VALUES ('pool/acme/web/llm/digitalocean/sfo3/s-2/2025-03-01T10', 'visor.node-hours', 'acme',
	'pool/acme/web/llm/digitalocean/sfo3', 's-2', 1740823200, 2.5,
	'{"cluster":"sfo3","pool":"pool/acme/web/llm/digitalocean/sfo3","project":"web","provider":"digitalocean","service":"llm","size":"s-2"}', 7);
`

// A ledger file from before tiers opens with its rows kept and the new
// columns filled from each row's dimensions; opening it again is a no-op,
// and a repeat of the old row's key still inserts nothing.
func TestLedgerMigratesAnOldFileInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meter.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(ledgerSchemaV0)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	for range 2 {
		l, err := Open(path)
		require.NoError(t, err)
		rows, err := l.List(context.Background(), Filter{})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		r := rows[0]
		require.Equal(t, contract.TierManaged, r.Tier)
		require.Equal(t, "web", r.Project)
		require.Equal(t, "digitalocean", r.Provider)
		require.Equal(t, "sfo3", r.Cluster)
		require.Equal(t, "s-2", r.Size)
		require.Equal(t, 2.5, r.Value)
		require.Equal(t, meteringtest.At(10, 0), r.Hour)
		var version int
		require.NoError(t, l.db.QueryRow(`PRAGMA user_version`).Scan(&version))
		require.Equal(t, version, version)

		again := metering.EventsForHour(meteringtest.Pool, meteringtest.TimelineOf(t, meteringtest.Step("s-2", 3, meteringtest.At(9, 0))), meteringtest.At(10, 0))
		n, err := l.Insert(context.Background(), again)
		require.NoError(t, err)
		require.Zero(t, n, "the migrated row's key still dedupes")
		require.NoError(t, l.Close())
	}
}

// Org totals keep the tiers and meters apart: node-hours are never added
// to pool-hours.
func TestLedgerOrgTotalsPerTierAndMeter(t *testing.T) {
	ctx := context.Background()
	l := openTestLedger(t, filepath.Join(t.TempDir(), "meter.db"))
	tl := meteringtest.TimelineOf(t, meteringtest.Step("s-2", 2, meteringtest.At(0, 0)))
	byoPool := meteringtest.Pool
	byoPool.Cluster = "tenant"
	byo := metering.Tiers{Start: meteringtest.At(0, 30), Changes: []metering.TierChange{{Tier: contract.TierBYO, From: meteringtest.At(0, 30)}}}
	var events []metering.Event
	for _, h := range metering.HoursToMeter(meteringtest.At(0, 0), meteringtest.At(3, 0)) {
		events = append(events, metering.EventsForTieredHour(meteringtest.Pool, tl, metering.Tiers{Start: meteringtest.At(0, 0)}, h)...)
		events = append(events, metering.EventsForTieredHour(byoPool, tl, byo, h)...)
	}
	require.NoError(t, l.Report(ctx, events))
	totals, err := l.OrgTotals(ctx, Filter{})
	require.NoError(t, err)
	require.Equal(t, []OrgTotal{
		{Org: "acme", Tier: "byo", MeterID: metering.MeterPoolHours, Pools: 1, Hours: 3, Value: 2.5},
		{Org: "acme", Tier: "managed", MeterID: metering.MeterNodeHours, Pools: 1, Hours: 3, Value: 6},
	}, totals)
	byoRows, err := l.List(ctx, Filter{Tier: "byo"})
	require.NoError(t, err)
	require.Len(t, byoRows, 3)
	require.Equal(t, "2", byoRows[1].Dimensions[metering.DimNodeHours], "the nodes that ran are told, not billed")
	managedOnly, err := l.Totals(ctx, Filter{Meter: metering.MeterNodeHours})
	require.NoError(t, err)
	require.Len(t, managedOnly, 1)
}
