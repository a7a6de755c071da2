package main

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

func checkLedgerUnique(t truth) result {
	r := result{Name: "one ledger row per pool, size, hour"}
	seen := map[string]int{}
	for _, row := range t.Ledger {
		r.Checked++
		seen[fmt.Sprintf("%s size %s hour %s", row.PoolID, row.Size, row.Hour.UTC().Format("2006-01-02T15"))]++
	}
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if n := seen[k]; n > 1 {
			r.fail("%s: %d rows", k, n)
		}
	}
	return r
}

// checkLedgerGaps: every hour from a pool's first metered hour up to its
// meter cursor has a row (every chaos pool keeps at least one node, so
// every hour has something to bill), no row lies past the cursor, the
// first row is no later than the pool's first hour (or the one after, when
// it started in the hour's last moments), and the cursor is not behind
// the last complete hour.
func checkLedgerGaps(t truth) result {
	r := result{Name: "no gap in a pool's metered hours"}
	firstStart := map[string]time.Time{}
	for _, run := range t.Runs {
		if s, ok := firstStart[run.WorkflowID]; !ok || run.Start.Before(s) {
			firstStart[run.WorkflowID] = run.Start
		}
	}
	hours := map[string]map[time.Time]bool{}
	known := map[string]bool{}
	for _, p := range t.Spec.Pools {
		known[p.Key.WorkflowID()] = true
	}
	for _, row := range t.Ledger {
		if !known[row.PoolID] {
			r.fail("ledger row for %s, which is no pool of the spec (%s)", row.PoolID, row.Idempotency)
			continue
		}
		if hours[row.PoolID] == nil {
			hours[row.PoolID] = map[time.Time]bool{}
		}
		hours[row.PoolID][row.Hour.UTC()] = true
	}
	lastComplete := t.Pools.ReadAt.UTC().Truncate(time.Hour)
	for _, p := range t.Spec.Pools {
		id := p.Key.WorkflowID()
		st := t.Pools.Status[id].Status
		if st == nil {
			r.Checked++
			r.fail("%s: no status, so no meter cursor (%s)", id, t.Pools.Status[id].Err)
			continue
		}
		cursor := st.MeteredThrough.UTC()
		start := firstStart[id].UTC().Truncate(time.Hour)
		h := hours[id]
		// The cursor may lag the hour that just ended by the time the
		// meter activity takes; more than that is a pool not metering.
		if cursor.Before(lastComplete) && t.Pools.ReadAt.Sub(lastComplete) > 5*time.Minute {
			r.fail("%s: metered through %s, but the hour before %s is complete", id, cursor.Format("2006-01-02T15"), lastComplete.Format("2006-01-02T15"))
		}
		if len(h) == 0 {
			r.Checked++
			if cursor.After(start.Add(time.Hour)) {
				r.fail("%s: metered through %s but the ledger has no row for it", id, cursor.Format("2006-01-02T15"))
			}
			continue
		}
		first := minTime(h)
		if first.After(start.Add(time.Hour)) {
			r.fail("%s: first row is for %s, but the pool started in hour %s", id, first.Format("2006-01-02T15"), start.Format("2006-01-02T15"))
		}
		for hour := first; hour.Before(cursor); hour = hour.Add(time.Hour) {
			r.Checked++
			if !h[hour] {
				r.fail("%s: no row for hour %s (metered through %s)", id, hour.Format("2006-01-02T15"), cursor.Format("2006-01-02T15"))
			}
		}
		for hour := range h {
			if !hour.Before(cursor) {
				r.fail("%s: row for hour %s, at or past the meter cursor %s", id, hour.Format("2006-01-02T15"), cursor.Format("2006-01-02T15"))
			}
		}
	}
	return r
}

func minTime(set map[time.Time]bool) time.Time {
	var first time.Time
	for h := range set {
		if first.IsZero() || h.Before(first) {
			first = h
		}
	}
	return first
}
