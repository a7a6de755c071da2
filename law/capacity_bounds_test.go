package law

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// officeHours: 10 nodes from 08:00 to 19:00 Berlin time on weekdays,
// pre-scaled 10 minutes early; at most 4 nodes from 22:00 for 9 hours.
func officeHours() types.Policy {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 2, 20
	p.ProvisioningDelay = types.Duration(10 * time.Minute)
	p.CapacityWindows = []types.CapacityWindow{
		{Name: "office", Schedule: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: types.Duration(11 * time.Hour), MinNodes: 10},
		{Name: "night", Schedule: "0 22 * * *", TimeZone: "Europe/Berlin", Duration: types.Duration(9 * time.Hour), MaxNodes: 4},
	}
	return p
}

const (
	office = `capacityWindows[0] "office"`
	night  = `capacityWindows[1] "night"`
)

func TestOfficeHoursPolicyIsValid(t *testing.T) {
	require.NoError(t, officeHours().Validate())
}

// Berlin is UTC+1 until 29 March 2026 01:00 UTC and UTC+2 after, so 08:00
// local is 07:00 UTC on Monday 23 March and 06:00 UTC on Monday 30 March.
func TestEffectiveBoundsAtWindowEdgesAcrossDST(t *testing.T) {
	p := officeHours()
	for _, tc := range []struct {
		at         string
		min, max   int
		floor, cap string
		prescaling bool
	}{
		// Winter time (CET).
		{at: "2026-03-23T05:59:59Z", min: 2, max: 4, cap: night},
		{at: "2026-03-23T06:00:00Z", min: 2, max: 20},
		{at: "2026-03-23T06:49:59Z", min: 2, max: 20},
		{at: "2026-03-23T06:50:00Z", min: 10, max: 20, floor: office, prescaling: true},
		{at: "2026-03-23T06:59:59Z", min: 10, max: 20, floor: office, prescaling: true},
		{at: "2026-03-23T07:00:00Z", min: 10, max: 20, floor: office},
		{at: "2026-03-23T17:59:59Z", min: 10, max: 20, floor: office},
		{at: "2026-03-23T18:00:00Z", min: 2, max: 20},
		{at: "2026-03-23T20:59:59Z", min: 2, max: 20},
		{at: "2026-03-23T21:00:00Z", min: 2, max: 4, cap: night},
		// The weekend: no office window, the night window still caps.
		{at: "2026-03-28T07:30:00Z", min: 2, max: 20},
		{at: "2026-03-28T05:59:59Z", min: 2, max: 4, cap: night},
		// Summer time (CEST): the same local hours, an hour earlier in UTC.
		{at: "2026-03-30T05:49:59Z", min: 2, max: 20},
		{at: "2026-03-30T05:50:00Z", min: 10, max: 20, floor: office, prescaling: true},
		{at: "2026-03-30T06:00:00Z", min: 10, max: 20, floor: office},
		{at: "2026-03-30T16:59:59Z", min: 10, max: 20, floor: office},
		{at: "2026-03-30T17:00:00Z", min: 2, max: 20},
		{at: "2026-03-30T20:00:00Z", min: 2, max: 4, cap: night},
	} {
		t.Run(tc.at, func(t *testing.T) {
			b := EffectiveBounds(p, utc(tc.at))
			assert.Equal(t, tc.min, b.MinNodes, "floor")
			assert.Equal(t, tc.max, b.MaxNodes, "ceiling")
			assert.Equal(t, tc.floor, b.FloorWindow)
			assert.Equal(t, tc.prescaling, b.Prescaling)
			assert.Equal(t, tc.cap, b.CeilingWindow)
			assert.False(t, b.CeilingRaised)
		})
	}
}

func TestNextChangeFindsEachEdgeAndCrossesTheDSTWeekend(t *testing.T) {
	p := officeHours()
	for _, tc := range []struct{ from, want string }{
		{"2026-03-23T05:00:00Z", "2026-03-23T06:00:00Z"}, // night cap ends 07:00 local
		{"2026-03-23T06:00:00Z", "2026-03-23T06:50:00Z"}, // pre-scale starts
		{"2026-03-23T06:50:00Z", "2026-03-23T07:00:00Z"}, // window opens (pre-scaling ends)
		{"2026-03-23T07:00:00Z", "2026-03-23T18:00:00Z"}, // window closes
		{"2026-03-23T18:00:00Z", "2026-03-23T21:00:00Z"}, // night cap
		// Friday night to Monday morning, across the change to summer time:
		// the night cap ends at 07:00 local (05:00 UTC) on Saturday.
		{"2026-03-27T21:00:00Z", "2026-03-28T06:00:00Z"},
		{"2026-03-29T12:00:00Z", "2026-03-29T20:00:00Z"}, // Sunday 22:00 CEST
		{"2026-03-29T20:00:00Z", "2026-03-30T05:00:00Z"}, // cap ends Monday 07:00 CEST
		{"2026-03-30T05:00:00Z", "2026-03-30T05:50:00Z"}, // pre-scale, an hour earlier in UTC
		{"2026-03-30T05:59:59Z", "2026-03-30T06:00:00Z"}, // one second before opening
	} {
		got := NextChange(p, utc(tc.from))
		assert.Equal(t, utc(tc.want), got.UTC(), "from %s", tc.from)
		// The bounds really differ there, and not a second before.
		before := EffectiveBounds(p, got.Add(-time.Second))
		assert.NotEqual(t, before, EffectiveBounds(p, got), "from %s", tc.from)
	}
}

func TestNextChangeWithoutWindowsIsZero(t *testing.T) {
	p := types.DefaultPolicy()
	assert.True(t, NextChange(p, utc("2026-03-23T06:00:00Z")).IsZero())
	assert.Equal(t, Bounds{MinNodes: 2, MaxNodes: 50}, EffectiveBounds(p, utc("2026-03-23T06:00:00Z")))
}

// An open window wins a tie with one still pre-scaling; the larger floor
// wins otherwise.
func TestOverlappingWindowsTakeTheLargestFloorAndSmallestCeiling(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 1, 30
	p.CapacityWindows = []types.CapacityWindow{
		{Name: "early", Schedule: "0 9 * * *", Duration: types.Duration(2 * time.Hour), MinNodes: 6, MaxNodes: 12},
		{Name: "late", Schedule: "0 10 * * *", Duration: types.Duration(2 * time.Hour), MinNodes: 6, MaxNodes: 8},
		{Name: "peak", Schedule: "30 10 * * *", Duration: types.Duration(30 * time.Minute), MinNodes: 9},
	}
	b := EffectiveBounds(p, utc("2026-05-01T09:56:00Z")) // late pre-scaling, early open
	assert.Equal(t, Bounds{MinNodes: 6, MaxNodes: 12, FloorWindow: `capacityWindows[0] "early"`, CeilingWindow: `capacityWindows[0] "early"`}, b)
	b = EffectiveBounds(p, utc("2026-05-01T10:25:00Z")) // peak pre-scaling
	assert.Equal(t, Bounds{MinNodes: 9, MaxNodes: 9, FloorWindow: `capacityWindows[2] "peak"`, CeilingWindow: `capacityWindows[1] "late"`, Prescaling: true, CeilingRaised: true}, b)
	b = EffectiveBounds(p, utc("2026-05-01T11:30:00Z"))
	assert.Equal(t, Bounds{MinNodes: 6, MaxNodes: 8, FloorWindow: `capacityWindows[1] "late"`, CeilingWindow: `capacityWindows[1] "late"`}, b)
}

// Go's zone rules and robfig/cron decide what a wall-clock time the DST
// change skips or repeats means: 02:30 does not happen on 29 March in
// Berlin, so that day has no window; it happens twice on 25 October, so
// the window that day covers both (it is an hour longer).
func TestWindowsAtSkippedAndRepeatedLocalTimes(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 1, 10
	p.CapacityWindows = []types.CapacityWindow{{Schedule: "30 2 * * *", TimeZone: "Europe/Berlin", Duration: types.Duration(time.Hour), MinNodes: 5}}
	p.ProvisioningDelay = types.Duration(time.Minute)
	assert.Equal(t, 5, EffectiveBounds(p, utc("2026-03-28T01:45:00Z")).MinNodes, "02:45 CET on Saturday")
	assert.Equal(t, 1, EffectiveBounds(p, utc("2026-03-29T00:45:00Z")).MinNodes, "no 02:30 on the spring-forward day")
	assert.Equal(t, 5, EffectiveBounds(p, utc("2026-03-30T00:45:00Z")).MinNodes, "02:45 CEST on Monday")
	// 25 October: 02:30 CEST (00:30 UTC) and 02:30 CET (01:30 UTC).
	assert.Equal(t, 5, EffectiveBounds(p, utc("2026-10-25T00:45:00Z")).MinNodes)
	assert.Equal(t, 5, EffectiveBounds(p, utc("2026-10-25T02:15:00Z")).MinNodes)
	assert.Equal(t, utc("2026-10-25T02:30:00Z"), NextChange(p, utc("2026-10-25T00:45:00Z")).UTC(), "the repeated hour extends the window")
	assert.Equal(t, 1, EffectiveBounds(p, utc("2026-10-25T02:30:00Z")).MinNodes)
}

// A minute-by-minute window with a long duration chains many firings;
// openUntil still ends.
func TestChainedFiringsStayBounded(t *testing.T) {
	w, err := compileWindow("w", "", "* * * * *", "", 7*24*time.Hour, 0)
	require.NoError(t, err)
	now := utc("2026-05-01T00:00:00Z")
	assert.True(t, w.open(now))
	assert.True(t, w.openUntil(now).After(now))
}

func BenchmarkEffectiveBounds(b *testing.B) {
	p := officeHours()
	now := utc("2026-03-23T06:55:00Z")
	b.ReportAllocs()
	for b.Loop() {
		EffectiveBounds(p, now)
	}
}

func BenchmarkNextChange(b *testing.B) {
	p := officeHours()
	now := utc("2026-03-27T21:00:00Z")
	b.ReportAllocs()
	for b.Loop() {
		NextChange(p, now)
	}
}

// Walking a fortnight across the DST change minute by minute, the bounds
// hold still until NextChange says, and change there.
func TestNextChangeAgreesWithEffectiveBoundsMinuteByMinute(t *testing.T) {
	p := officeHours()
	p.CapacityWindows = append(p.CapacityWindows, types.CapacityWindow{Schedule: "*/20 9-11 * * 6", TimeZone: "Asia/Kolkata", Duration: types.Duration(25 * time.Minute), MinNodes: 12})
	require.NoError(t, p.Validate())
	start, end := utc("2026-03-21T00:00:00Z"), utc("2026-04-04T00:00:00Z")
	changes := 0
	for t0 := start; t0.Before(end); {
		at := EffectiveBounds(p, t0)
		next := NextChange(p, t0)
		require.False(t, next.IsZero())
		for m := t0.Truncate(time.Minute).Add(time.Minute); m.Before(next); m = m.Add(time.Minute) {
			require.Equal(t, at, EffectiveBounds(p, m), "bounds changed at %s before NextChange(%s) = %s", m, t0, next)
		}
		require.NotEqual(t, at, EffectiveBounds(p, next), "nothing changes at %s", next)
		t0 = next
		changes++
	}
	assert.Greater(t, changes, 40)
}

// The answer depends on the instant, not on the zone the caller's time
// value happens to carry.
func TestBoundsIgnoreTheCallersLocation(t *testing.T) {
	p := officeHours()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	for _, at := range []string{"2026-03-23T06:50:00Z", "2026-03-30T05:59:59Z", "2026-03-23T21:00:00Z"} {
		now := utc(at)
		assert.Equal(t, EffectiveBounds(p, now), EffectiveBounds(p, now.In(tokyo)))
		assert.True(t, NextChange(p, now).Equal(NextChange(p, now.In(tokyo))))
	}
}
