package metering

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Filter narrows List and Totals. Empty fields match everything; From is
// inclusive and To exclusive, both on the event's hour.
type Filter struct {
	Org  string
	Pool string // pool workflow ID
	From time.Time
	To   time.Time
	// Limit caps List's rows; zero means no cap.
	Limit int
}

// Row is one ledger entry.
type Row struct {
	Event
	Pool       string
	Size       string
	RecordedAt time.Time
}

// Total sums a pool's node-hours of one size over the filtered hours.
type Total struct {
	Org       string
	Pool      string
	Size      string
	Hours     int // events summed, one per hour
	NodeHours float64
}

func (f Filter) where() (string, []any, error) {
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return "", nil, fmt.Errorf("filter: to %s is not after from %s", f.To.Format(time.RFC3339), f.From.Format(time.RFC3339))
	}
	if f.Limit < 0 {
		return "", nil, fmt.Errorf("filter: limit %d is negative", f.Limit)
	}
	var conds []string
	var args []any
	if f.Org != "" {
		conds, args = append(conds, "org = ?"), append(args, f.Org)
	}
	if f.Pool != "" {
		conds, args = append(conds, "pool = ?"), append(args, f.Pool)
	}
	if !f.From.IsZero() {
		// Ceil: an hour starting before From is not in [From, To).
		from := f.From.Truncate(time.Hour)
		if from.Before(f.From) {
			from = from.Add(time.Hour)
		}
		conds, args = append(conds, "hour >= ?"), append(args, from.Unix())
	}
	if !f.To.IsZero() {
		conds, args = append(conds, "hour < ?"), append(args, f.To.Unix())
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// List returns the matching entries ordered by hour, pool and size.
func (l *Ledger) List(ctx context.Context, f Filter) ([]Row, error) {
	where, args, err := f.where()
	if err != nil {
		return nil, err
	}
	q := `SELECT idempotency, meter_id, org, pool, size, hour, value, dimensions, recorded_at
		FROM meter_events` + where + ` ORDER BY hour, pool, size`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var hour, recorded int64
		var dims string
		if err := rows.Scan(&r.Idempotency, &r.MeterID, &r.UserID, &r.Pool, &r.Size, &hour, &r.Value, &dims, &recorded); err != nil {
			return nil, fmt.Errorf("list ledger %s: %w", l.path, err)
		}
		if err := json.Unmarshal([]byte(dims), &r.Dimensions); err != nil {
			return nil, fmt.Errorf("list ledger %s: dimensions of %s: %w", l.path, r.Idempotency, err)
		}
		r.Hour = time.Unix(hour, 0).UTC()
		r.RecordedAt = time.Unix(0, recorded).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list ledger %s: %w", l.path, err)
	}
	return out, nil
}

// Totals sums node-hours by org, pool and size over the filter (Limit
// ignored), ordered by org, pool and size.
func (l *Ledger) Totals(ctx context.Context, f Filter) ([]Total, error) {
	f.Limit = 0
	where, args, err := f.where()
	if err != nil {
		return nil, err
	}
	rows, err := l.db.QueryContext(ctx, `SELECT org, pool, size, COUNT(*), SUM(value)
		FROM meter_events`+where+` GROUP BY org, pool, size ORDER BY org, pool, size`, args...)
	if err != nil {
		return nil, fmt.Errorf("total ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	var out []Total
	for rows.Next() {
		var t Total
		if err := rows.Scan(&t.Org, &t.Pool, &t.Size, &t.Hours, &t.NodeHours); err != nil {
			return nil, fmt.Errorf("total ledger %s: %w", l.path, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("total ledger %s: %w", l.path, err)
	}
	return out, nil
}
