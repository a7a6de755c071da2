package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
)

// Filter narrows List and Totals. Empty fields match everything; From is
// inclusive and To exclusive, both on the event's hour.
type Filter struct {
	Org  string
	Pool string // pool workflow ID
	// Tier and Meter keep only one billing tier or meter ID.
	Tier  string
	Meter string
	From  time.Time
	To    time.Time
	// Limit caps List's rows; zero means no cap.
	Limit int
}

// Row is one ledger entry.
type Row struct {
	metering.Event
	RecordedAt time.Time
}

// Total sums one pool's meter (and size) over the filtered hours: the
// value is node-hours or pool-hours, as MeterID says.
type Total struct {
	Org     string
	Tier    string
	MeterID string
	Pool    string
	Size    string
	Hours   int // events summed, one per hour
	Value   float64
}

// OrgTotal sums an org's meter over all its pools: what it is billed.
type OrgTotal struct {
	Org     string
	Tier    string
	MeterID string
	Pools   int
	Hours   int // events summed
	Value   float64
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
	if f.Tier != "" {
		conds, args = append(conds, "tier = ?"), append(args, f.Tier)
	}
	if f.Meter != "" {
		conds, args = append(conds, "meter_id = ?"), append(args, f.Meter)
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
	q := `SELECT idempotency, meter_id, org, pool, size, hour, value, dimensions, recorded_at, tier, project, provider, cluster
		FROM meter_events` + where + ` ORDER BY hour, pool, meter_id, size`
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
		var dims, tier string
		if err := rows.Scan(&r.Idempotency, &r.MeterID, &r.UserID, &r.PoolID, &r.Size, &hour, &r.Value, &dims, &recorded,
			&tier, &r.Project, &r.Provider, &r.Cluster); err != nil {
			return nil, fmt.Errorf("list ledger %s: %w", l.path, err)
		}
		if err := json.Unmarshal([]byte(dims), &r.Dimensions); err != nil {
			return nil, fmt.Errorf("list ledger %s: dimensions of %s: %w", l.path, r.Idempotency, err)
		}
		r.Tier = contract.BillingTier(tier)
		r.Hour = time.Unix(hour, 0).UTC()
		r.RecordedAt = time.Unix(0, recorded).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list ledger %s: %w", l.path, err)
	}
	return out, nil
}

// Totals sums each pool's meters by org, tier, meter, pool and size over
// the filter (Limit ignored), in that order.
func (l *Ledger) Totals(ctx context.Context, f Filter) ([]Total, error) {
	var out []Total
	err := l.sum(ctx, f, "org, tier, meter_id, pool, size", func(scan func(...any) error) error {
		var t Total
		if err := scan(&t.Org, &t.Tier, &t.MeterID, &t.Pool, &t.Size, &t.Hours, &t.Value); err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// OrgTotals sums the meters by org, tier and meter over the filter
// (Limit ignored): each org's bill per meter, in that order.
func (l *Ledger) OrgTotals(ctx context.Context, f Filter) ([]OrgTotal, error) {
	var out []OrgTotal
	err := l.sum(ctx, f, "org, tier, meter_id", func(scan func(...any) error) error {
		var t OrgTotal
		if err := scan(&t.Org, &t.Tier, &t.MeterID, &t.Pools, &t.Hours, &t.Value); err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// sum groups the filtered rows by the columns and hands each group's
// columns, then its distinct pools (org totals only), events and sum.
func (l *Ledger) sum(ctx context.Context, f Filter, by string, each func(scan func(...any) error) error) error {
	f.Limit = 0
	where, args, err := f.where()
	if err != nil {
		return err
	}
	counts := "COUNT(*), SUM(value)"
	if !strings.Contains(by, "pool") {
		counts = "COUNT(DISTINCT pool), " + counts
	}
	rows, err := l.db.QueryContext(ctx, `SELECT `+by+`, `+counts+`
		FROM meter_events`+where+` GROUP BY `+by+` ORDER BY `+by, args...)
	if err != nil {
		return fmt.Errorf("total ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return fmt.Errorf("total ledger %s: %w", l.path, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("total ledger %s: %w", l.path, err)
	}
	return nil
}
