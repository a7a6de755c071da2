package law

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

// Scale-down only 20:00-06:00 New York time, never during the Friday
// 22:00 batch hour.
func disruptionPolicy() types.Policy {
	p := types.DefaultPolicy()
	p.Disruption = &types.DisruptionBudget{
		MaxDrainingNodes: 3, MaxDrainingPercent: 20,
		Windows: []types.DisruptionWindow{
			{Name: "nights", Schedule: "0 20 * * *", TimeZone: "America/New_York", Duration: types.Duration(10 * time.Hour), ScaleDown: types.ScaleDownAllowed},
			{Name: "batch", Schedule: "0 22 * * 5", TimeZone: "America/New_York", Duration: types.Duration(time.Hour), ScaleDown: types.ScaleDownForbidden},
		},
	}
	return p
}

// New York is UTC-5 until 8 March 2026 07:00 UTC and UTC-4 after.
func TestScaleDownAllowedAtWindowEdgesAcrossDST(t *testing.T) {
	p := disruptionPolicy()
	require.NoError(t, p.Validate())
	waits := "scale-down waits for an allowed disruption window"
	batch := `scale-down forbidden by disruption.windows[1] "batch"`
	for _, tc := range []struct {
		at, until string
		allowed   bool
		reason    string
	}{
		// Thursday 5 March (EST): nights open 01:00-11:00 UTC.
		{"2026-03-05T00:59:59Z", "2026-03-05T01:00:00Z", false, waits},
		{"2026-03-05T01:00:00Z", "2026-03-05T11:00:00Z", true, ""},
		{"2026-03-05T10:59:59Z", "2026-03-05T11:00:00Z", true, ""},
		{"2026-03-05T11:00:00Z", "2026-03-06T01:00:00Z", false, waits},
		// Friday 6 March: the batch hour 03:00-04:00 UTC Saturday is forbidden
		// inside the allowed night.
		{"2026-03-07T01:00:00Z", "2026-03-07T03:00:00Z", true, ""},
		{"2026-03-07T03:00:00Z", "2026-03-07T04:00:00Z", false, batch},
		{"2026-03-07T04:00:00Z", "2026-03-07T11:00:00Z", true, ""},
		// Saturday 7 March 20:00 EST opens the night that the change to
		// daylight time (Sunday 02:00 local) shortens: it still lasts 10
		// hours of elapsed time, to 11:00 UTC (07:00 EDT).
		{"2026-03-08T10:59:59Z", "2026-03-08T11:00:00Z", true, ""},
		// Monday 9 March (EDT): nights open at 00:00 UTC, an hour earlier.
		{"2026-03-09T23:59:59Z", "2026-03-10T00:00:00Z", false, waits},
		{"2026-03-10T00:00:00Z", "2026-03-10T10:00:00Z", true, ""},
	} {
		v := ScaleDownAllowed(p, utc(tc.at))
		assert.Equal(t, tc.allowed, v.Allowed, tc.at)
		assert.Equal(t, tc.reason, v.Reason, tc.at)
		assert.Equal(t, utc(tc.until), v.Until.UTC(), tc.at)
	}
}

func TestScaleDownWithoutWindowsOrOnlyForbiddenOnes(t *testing.T) {
	p := types.DefaultPolicy()
	assert.Equal(t, ScaleDownVerdict{Allowed: true}, ScaleDownAllowed(p, utc("2026-03-05T00:00:00Z")))

	p.Disruption = &types.DisruptionBudget{Windows: []types.DisruptionWindow{
		{Schedule: "0 9 * * 1-5", TimeZone: "Asia/Tokyo", Duration: types.Duration(8 * time.Hour), ScaleDown: types.ScaleDownForbidden},
	}}
	// Thursday 09:00 JST is 00:00 UTC (Japan keeps no DST).
	v := ScaleDownAllowed(p, utc("2026-03-04T23:59:00Z"))
	assert.True(t, v.Allowed)
	assert.Equal(t, utc("2026-03-05T00:00:00Z"), v.Until.UTC())
	v = ScaleDownAllowed(p, utc("2026-03-05T00:00:00Z"))
	assert.False(t, v.Allowed)
	assert.Equal(t, `scale-down forbidden by disruption.windows[0]`, v.Reason)
	assert.Equal(t, utc("2026-03-05T08:00:00Z"), v.Until.UTC())
	// Friday's window ends at 08:00 UTC; the next starts Monday.
	v = ScaleDownAllowed(p, utc("2026-03-06T08:00:00Z"))
	assert.True(t, v.Allowed)
	assert.Equal(t, utc("2026-03-09T00:00:00Z"), v.Until.UTC())
}

func TestMaxDrainingTakesTheSmallerCapRoundingPercentUp(t *testing.T) {
	for _, tc := range []struct {
		nodes, pct, count int
		want              int
	}{
		{nodes: 10, want: 10},          // no budget
		{nodes: 10, count: 3, want: 3}, // node cap
		{nodes: 2, count: 3, want: 2},  // never more than the pool
		{nodes: 10, pct: 25, want: 3},  // 2.5 rounds up
		{nodes: 1, pct: 1, want: 1},    // any share of a non-empty pool is at least one
		{nodes: 0, pct: 50, want: 0},   // nothing to drain
		{nodes: 40, pct: 20, count: 3, want: 3},
		{nodes: 10, pct: 20, count: 3, want: 2},
		{nodes: 10, pct: 100, want: 10},
	} {
		p := types.DefaultPolicy()
		if tc.pct > 0 || tc.count > 0 {
			p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: tc.count, MaxDrainingPercent: tc.pct}
		}
		assert.Equal(t, tc.want, MaxDraining(p, tc.nodes), "%+v", tc)
	}
	p := disruptionPolicy() // 3 nodes or 20 %
	assert.Equal(t, 3, DrainSlots(p, 20, 0))
	assert.Equal(t, 1, DrainSlots(p, 20, 2))
	assert.Equal(t, 0, DrainSlots(p, 20, 5), "over budget already: none, never negative")
	assert.Equal(t, 1, DrainSlots(p, 5, 0))
}

func BenchmarkScaleDownAllowed(b *testing.B) {
	p := disruptionPolicy()
	now := utc("2026-03-07T02:00:00Z")
	b.ReportAllocs()
	for b.Loop() {
		ScaleDownAllowed(p, now)
	}
}

// Minute by minute across New York's change to daylight time, the verdict
// holds until its Until and flips there.
func TestScaleDownUntilAgreesMinuteByMinute(t *testing.T) {
	p := disruptionPolicy()
	start, end := utc("2026-03-02T00:00:00Z"), utc("2026-03-16T00:00:00Z")
	var flips int
	for t0 := start; t0.Before(end); {
		v := ScaleDownAllowed(p, t0)
		require.False(t, v.Until.IsZero())
		for m := t0.Truncate(time.Minute).Add(time.Minute); m.Before(v.Until); m = m.Add(time.Minute) {
			require.Equal(t, v.Allowed, ScaleDownAllowed(p, m).Allowed, "flipped at %s before %s", m, v.Until)
		}
		require.NotEqual(t, v.Allowed, ScaleDownAllowed(p, v.Until).Allowed, "no flip at %s", v.Until)
		t0 = v.Until
		if t0.Before(end) {
			flips++
		}
	}
	assert.Equal(t, 2*14+2*2, flips, "a night a day opens and closes, and the two Friday batch hours split theirs")
}
