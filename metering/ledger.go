package metering

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"github.com/hanzoai/visor-fleet/connectors"
)

// Ledger is the embedded default sink: a SQLite file where each event's
// idempotency key is unique, so a repeated report inserts nothing. WAL mode
// and a busy timeout let the worker write while `visor meter list` reads,
// and let two writers (a retried activity racing its first attempt) queue
// instead of failing.
type Ledger struct {
	db   *sql.DB
	path string
}

var _ Sink = (*Ledger)(nil)

const ledgerSchema = `
CREATE TABLE IF NOT EXISTS meter_events (
	idempotency TEXT    NOT NULL UNIQUE,
	meter_id    TEXT    NOT NULL,
	org         TEXT    NOT NULL,
	pool        TEXT    NOT NULL,
	size        TEXT    NOT NULL,
	hour        INTEGER NOT NULL, -- unix seconds of the UTC hour's start
	value       REAL    NOT NULL,
	dimensions  TEXT    NOT NULL, -- JSON object
	recorded_at INTEGER NOT NULL  -- unix nanoseconds, when first inserted
);
CREATE INDEX IF NOT EXISTS meter_events_org_pool_hour ON meter_events (org, pool, hour);
CREATE INDEX IF NOT EXISTS meter_events_hour ON meter_events (hour);
`

// OpenLedger opens (creating if needed) the ledger file at path.
func OpenLedger(path string) (*Ledger, error) {
	if path == "" {
		return nil, fmt.Errorf("ledger path is empty")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("ledger path %q must not contain '?' or '#'", path)
	}
	params := url.Values{}
	// busy_timeout first (the driver orders it so): waiting for a lock
	// beats failing with SQLITE_BUSY. FULL sync because a lost commit is
	// a lost bill: the workflow has already moved its cursor on.
	params.Add("_pragma", "busy_timeout(10000)")
	params.Add("_pragma", "journal_mode(WAL)")
	params.Add("_pragma", "synchronous(FULL)")
	// BEGIN IMMEDIATE takes the write lock up front, so concurrent
	// writers wait on busy_timeout instead of deadlocking on upgrade.
	params.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if _, err := db.Exec(ledgerSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open ledger %s: create schema: %w", path, err)
	}
	return &Ledger{db: db, path: path}, nil
}

// Close closes the file.
func (l *Ledger) Close() error { return l.db.Close() }

// Path is the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// Report inserts the batch in one transaction; keys already present are
// skipped. Invalid events fail the whole batch as Permanent, inserting none.
func (l *Ledger) Report(ctx context.Context, events []Event) error {
	_, err := l.Insert(ctx, events)
	return err
}

// Insert is Report that also says how many events were new.
func (l *Ledger) Insert(ctx context.Context, events []Event) (inserted int, err error) {
	if len(events) == 0 {
		return 0, nil
	}
	fail := func(class connectors.ErrorClass, err error) (int, error) {
		return 0, connectors.NewError(class, "ledger", "report to "+l.path, err)
	}
	if err := validateEvents(events); err != nil {
		return fail(connectors.Permanent, err)
	}
	for _, e := range events {
		if e.Dimensions[DimPool] == "" {
			return fail(connectors.Permanent, fmt.Errorf("meter event %s has no %q dimension", e.Idempotency, DimPool))
		}
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(connectors.Retryable, err)
	}
	defer tx.Rollback() // no-op after Commit
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO meter_events
		(idempotency, meter_id, org, pool, size, hour, value, dimensions, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (idempotency) DO NOTHING`)
	if err != nil {
		return fail(connectors.Retryable, err)
	}
	defer stmt.Close()
	now := time.Now().UnixNano()
	for _, e := range events {
		dims, err := json.Marshal(e.Dimensions)
		if err != nil {
			return fail(connectors.Permanent, fmt.Errorf("meter event %s: dimensions: %w", e.Idempotency, err))
		}
		res, err := stmt.ExecContext(ctx, e.Idempotency, e.MeterID, e.UserID, e.Dimensions[DimPool],
			e.Dimensions[DimSize], e.Hour.Unix(), e.Value, string(dims), now)
		if err != nil {
			return fail(connectors.Retryable, fmt.Errorf("insert %s: %w", e.Idempotency, err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fail(connectors.Retryable, err)
		}
		inserted += int(n)
	}
	if err := tx.Commit(); err != nil {
		return fail(connectors.Retryable, fmt.Errorf("commit: %w", err))
	}
	return inserted, nil
}
