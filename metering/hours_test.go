package metering

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHoursToMeter(t *testing.T) {
	require.Empty(t, HoursToMeter(at(10, 0), at(10, 59).Add(59*time.Second)), "hour not complete yet")
	require.Equal(t, []time.Time{at(10, 0)}, HoursToMeter(at(10, 0), at(11, 0)))
	require.Equal(t, []time.Time{at(10, 0), at(11, 0), at(12, 0), at(13, 0), at(14, 0)},
		HoursToMeter(at(10, 0), at(15, 20)), "back-fill after a five-hour outage")
	require.Equal(t, []time.Time{at(10, 0)}, HoursToMeter(at(10, 17), at(11, 5)), "cursor inside an hour")
	require.Nil(t, HoursToMeter(time.Time{}, at(11, 0)), "zero cursor")
	require.Nil(t, HoursToMeter(at(12, 0), at(11, 0)), "clock behind the cursor")
}

// A cursor advanced past each metered hour, woken at irregular times with
// outages between, covers every hour exactly once.
func TestHoursToMeterNeverSkipsOrDoubles(t *testing.T) {
	cursor := at(0, 0)
	seen := map[time.Time]int{}
	now := at(0, 0)
	for _, step := range []time.Duration{
		59 * time.Minute, 2 * time.Minute, 5*time.Hour + 3*time.Minute, time.Second,
		61 * time.Minute, 0, 30 * time.Minute, 11*time.Hour + 7*time.Minute,
	} {
		now = now.Add(step)
		hours := HoursToMeter(cursor, now)
		for _, h := range hours {
			seen[h]++
			cursor = h.Add(time.Hour)
		}
	}
	require.Equal(t, now.Truncate(time.Hour), cursor)
	require.Len(t, seen, int(cursor.Sub(at(0, 0))/time.Hour))
	for h, n := range seen {
		require.Equal(t, 1, n, "hour %s", h)
	}
}
