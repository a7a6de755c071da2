// Package ledger is the embedded meter sink: a SQLite file of meter events
// keyed by idempotency key, and the queries `visor meter list` and the
// fleet metrics read from it. The events come from package metering.
package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
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

var _ metering.Sink = (*Ledger)(nil)

// schema is the current table; a file made before tiers (version
// 0, without tier, project, provider and cluster) is migrated in place by
// migrate, keeping its rows.
const schema = `
CREATE TABLE IF NOT EXISTS meter_events (
	idempotency TEXT    NOT NULL UNIQUE,
	meter_id    TEXT    NOT NULL, -- visor.node-hours or visor.management-plane.pool-hours
	org         TEXT    NOT NULL,
	pool        TEXT    NOT NULL,
	size        TEXT    NOT NULL, -- '' for pool-hours
	hour        INTEGER NOT NULL, -- unix seconds of the UTC hour's start
	value       REAL    NOT NULL,
	dimensions  TEXT    NOT NULL, -- JSON object
	recorded_at INTEGER NOT NULL, -- unix nanoseconds, when first inserted
	tier        TEXT    NOT NULL DEFAULT 'managed',
	project     TEXT    NOT NULL DEFAULT '',
	provider    TEXT    NOT NULL DEFAULT '',
	cluster     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS meter_events_org_pool_hour ON meter_events (org, pool, hour);
CREATE INDEX IF NOT EXISTS meter_events_hour ON meter_events (hour);
`

// schemaVersion is PRAGMA user_version of a current ledger file.
const schemaVersion = 1

// migrate brings a version-0 file up to date in one transaction:
// the columns added since, filled from each row's dimensions (every row
// then was a managed node-hours row).
func migrate(db *sql.DB) error {
	// Inside one immediate transaction, so two processes opening an old
	// file at once migrate it once.
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if version >= schemaVersion {
		return nil
	}
	have := map[string]bool{}
	rows, err := tx.Query(`SELECT name FROM pragma_table_info('meter_events')`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		have[name] = true
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, col := range []struct{ name, def string }{
		{"tier", "TEXT NOT NULL DEFAULT 'managed'"},
		{"project", "TEXT NOT NULL DEFAULT ''"},
		{"provider", "TEXT NOT NULL DEFAULT ''"},
		{"cluster", "TEXT NOT NULL DEFAULT ''"},
	} {
		if have[col.name] {
			continue
		}
		if _, err := tx.Exec(`ALTER TABLE meter_events ADD COLUMN ` + col.name + ` ` + col.def); err != nil {
			return fmt.Errorf("add column %s: %w", col.name, err)
		}
		if col.name == "tier" {
			continue // the default is right: every older row is managed
		}
		if _, err := tx.Exec(`UPDATE meter_events SET `+col.name+` = COALESCE(json_extract(dimensions, ?), '')`, "$."+col.name); err != nil {
			return fmt.Errorf("fill column %s: %w", col.name, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Open opens (creating if needed) the ledger file at path.
func Open(path string) (*Ledger, error) {
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
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open ledger %s: create schema: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open ledger %s: migrate to version %d: %w", path, schemaVersion, err)
	}
	return &Ledger{db: db, path: path}, nil
}

// Close closes the file.
func (l *Ledger) Close() error { return l.db.Close() }

// Path is the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// Report inserts the batch in one transaction; keys already present are
// skipped. Invalid events fail the whole batch as Permanent, inserting none.
func (l *Ledger) Report(ctx context.Context, events []metering.Event) error {
	_, err := l.Insert(ctx, events)
	return err
}

// Insert is Report that also says how many events were new.
func (l *Ledger) Insert(ctx context.Context, events []metering.Event) (inserted int, err error) {
	if len(events) == 0 {
		return 0, nil
	}
	fail := func(class errclass.Class, err error) (int, error) {
		return 0, errclass.New(class, "ledger", "report to "+l.path, err)
	}
	events, err = metering.CheckEvents(events)
	if err != nil {
		return fail(errclass.Permanent, err)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(errclass.Retryable, err)
	}
	defer tx.Rollback() // no-op after Commit
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO meter_events
		(idempotency, meter_id, org, pool, size, hour, value, dimensions, recorded_at, tier, project, provider, cluster)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (idempotency) DO NOTHING`)
	if err != nil {
		return fail(errclass.Retryable, err)
	}
	defer stmt.Close()
	now := time.Now().UnixNano()
	for _, e := range events {
		dims, err := json.Marshal(e.Dimensions)
		if err != nil {
			return fail(errclass.Permanent, fmt.Errorf("meter event %s: dimensions: %w", e.Idempotency, err))
		}
		res, err := stmt.ExecContext(ctx, e.Idempotency, e.MeterID, e.UserID, e.PoolID,
			e.Size, e.Hour.Unix(), e.Value, string(dims), now, string(e.Tier), e.Project, e.Provider, e.Cluster)
		if err != nil {
			return fail(errclass.Retryable, fmt.Errorf("insert %s: %w", e.Idempotency, err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fail(errclass.Retryable, err)
		}
		inserted += int(n)
	}
	if err := tx.Commit(); err != nil {
		return fail(errclass.Retryable, fmt.Errorf("commit: %w", err))
	}
	return inserted, nil
}
