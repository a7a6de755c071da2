package ledger

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/metering/meteringtest"
)

func openTestLedger(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

func countRows(t *testing.T, l *Ledger) map[string]int {
	rows, err := l.List(context.Background(), Filter{})
	require.NoError(t, err)
	out := map[string]int{}
	for _, r := range rows {
		out[r.Idempotency]++
	}
	return out
}

func TestLedgerRepeatIsANoOp(t *testing.T) {
	ctx := context.Background()
	l := openTestLedger(t, filepath.Join(t.TempDir(), "meter.db"))
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 3)
	n, err := l.Insert(ctx, events)
	require.NoError(t, err)
	require.Equal(t, len(events), n)
	n, err = l.Insert(ctx, events)
	require.NoError(t, err)
	require.Zero(t, n)
	// A retry carrying one new hour inserts only that hour.
	more := meteringtest.DayOfEvents(t, meteringtest.Pool, 4)
	n, err = l.Insert(ctx, more)
	require.NoError(t, err)
	require.Equal(t, len(more)-len(events), n)
	rows := countRows(t, l)
	require.Len(t, rows, len(more))
	for key, c := range rows {
		require.Equal(t, 1, c, key)
	}
}

// A retried activity racing its first attempt: the same batch reported at
// once from several goroutines through two handles on the same file (as
// two worker processes would) still leaves one row per key.
func TestLedgerConcurrentRepeatsGiveOneRowPerKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meter.db")
	handles := []*Ledger{openTestLedger(t, path), openTestLedger(t, path)}
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 24)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	inserted := make(chan int, 16)
	for i := range 8 {
		wg.Go(func() {
			n, err := handles[i%2].Insert(context.Background(), events)
			errs <- err
			inserted <- n
		})
	}
	wg.Wait()
	close(errs)
	close(inserted)
	for err := range errs {
		require.NoError(t, err)
	}
	total := 0
	for n := range inserted {
		total += n
	}
	require.Equal(t, len(events), total, "exactly one attempt inserted each key")
	rows := countRows(t, handles[0])
	require.Len(t, rows, len(events))
	for key, c := range rows {
		require.Equal(t, 1, c, key)
	}
}

func TestLedgerReopenKeepsRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meter.db")
	l, err := Open(path)
	require.NoError(t, err)
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 2)
	require.NoError(t, l.Report(ctx, events))
	require.NoError(t, l.Close())

	l = openTestLedger(t, path)
	rows, err := l.List(ctx, Filter{})
	require.NoError(t, err)
	require.Len(t, rows, len(events))
	got := rows[0]
	want := events[0]
	require.Equal(t, want, got.Event)
	require.Equal(t, meteringtest.Pool.WorkflowID(), got.PoolID)
	require.Equal(t, "s-2", got.Size)
	require.WithinDuration(t, time.Now(), got.RecordedAt, time.Minute)
	n, err := l.Insert(ctx, events)
	require.NoError(t, err)
	require.Zero(t, n, "keys survive a restart")
}

func TestLedgerListAndTotalsFilter(t *testing.T) {
	ctx := context.Background()
	l := openTestLedger(t, filepath.Join(t.TempDir(), "meter.db"))
	other := meteringtest.Pool
	other.Org = "globex"
	otherCluster := meteringtest.Pool
	otherCluster.Cluster = "nyc1"
	require.NoError(t, l.Report(ctx, meteringtest.DayOfEvents(t, meteringtest.Pool, 5)))
	require.NoError(t, l.Report(ctx, meteringtest.DayOfEvents(t, other, 5)))
	require.NoError(t, l.Report(ctx, meteringtest.DayOfEvents(t, otherCluster, 5)))

	list := func(f Filter) []Row {
		rows, err := l.List(ctx, f)
		require.NoError(t, err)
		return rows
	}
	require.Len(t, list(Filter{}), 30)
	for _, r := range list(Filter{Org: "globex"}) {
		require.Equal(t, "globex", r.UserID)
	}
	require.Len(t, list(Filter{Org: "globex"}), 10)
	require.Len(t, list(Filter{Org: "acme"}), 20)
	require.Len(t, list(Filter{Pool: otherCluster.WorkflowID()}), 10)
	hours := list(Filter{Org: "acme", Pool: meteringtest.Pool.WorkflowID(), From: meteringtest.At(1, 0), To: meteringtest.At(3, 0)})
	require.Len(t, hours, 4)
	require.Equal(t, meteringtest.At(1, 0), hours[0].Hour)
	require.Equal(t, meteringtest.At(2, 0), hours[3].Hour)
	require.Len(t, list(Filter{From: meteringtest.At(1, 1)}), 18, "from inside an hour excludes that hour")
	require.Len(t, list(Filter{Limit: 7}), 7)
	_, err := l.List(ctx, Filter{From: meteringtest.At(3, 0), To: meteringtest.At(3, 0)})
	require.ErrorContains(t, err, "is not after from")

	totals, err := l.Totals(ctx, Filter{Org: "acme", Pool: meteringtest.Pool.WorkflowID()})
	require.NoError(t, err)
	require.Equal(t, []Total{
		{Org: "acme", Tier: "managed", MeterID: metering.MeterNodeHours, Pool: meteringtest.Pool.WorkflowID(), Size: "s-2", Hours: 5, Value: 10},
		{Org: "acme", Tier: "managed", MeterID: metering.MeterNodeHours, Pool: meteringtest.Pool.WorkflowID(), Size: "s-4", Hours: 5, Value: 4.5},
	}, totals)
}

func TestLedgerRejectsBadBatchWhole(t *testing.T) {
	ctx := context.Background()
	l := openTestLedger(t, filepath.Join(t.TempDir(), "meter.db"))
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 2)
	events[1].Value = -3
	err := l.Report(ctx, events)
	require.ErrorContains(t, err, events[1].Idempotency)
	require.True(t, errclass.IsPermanent(err))
	require.Empty(t, countRows(t, l), "nothing from a bad batch is kept")

	events = meteringtest.DayOfEvents(t, meteringtest.Pool, 1)
	delete(events[0].Dimensions, metering.DimPool)
	events[0].PoolID = ""
	require.ErrorContains(t, l.Report(ctx, events), "no poolId")
	require.Empty(t, countRows(t, l))

	_, err = Open("")
	require.ErrorContains(t, err, "empty")
	_, err = Open(filepath.Join(t.TempDir(), "a?b.db"))
	require.ErrorContains(t, err, "must not contain")
}

func TestLedgerUsesWAL(t *testing.T) {
	l := openTestLedger(t, filepath.Join(t.TempDir(), "meter.db"))
	var mode string
	require.NoError(t, l.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.Equal(t, "wal", mode)
	var busy int
	require.NoError(t, l.db.QueryRow("PRAGMA busy_timeout").Scan(&busy))
	require.Equal(t, 10000, busy)
}

// A report cut off mid-way (the worker dies, the context is cancelled)
// leaves nothing half-written; the retry then records every key once.
func TestLedgerInterruptedReportThenRetry(t *testing.T) {
	l := openTestLedger(t, filepath.Join(t.TempDir(), "meter.db"))
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 24)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Report(ctx, events)
	require.Error(t, err)
	require.False(t, errclass.IsPermanent(err), "an interrupted report must be retried")
	require.Empty(t, countRows(t, l))
	require.NoError(t, l.Report(context.Background(), events))
	require.NoError(t, l.Report(context.Background(), events))
	require.Len(t, countRows(t, l), len(events))
}
