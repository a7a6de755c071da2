package metering

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type change struct {
	size  string
	nodes int
	at    time.Time
}

func timelineOf(t testing.TB, changes ...change) Timeline {
	var tl Timeline
	for _, c := range changes {
		require.NoError(t, tl.Record(c.size, c.nodes, c.at))
	}
	return tl
}

func TestNodeHours(t *testing.T) {
	for name, tc := range map[string]struct {
		changes []change
		hour    time.Time
		want    map[string]float64
	}{
		"empty timeline": {nil, at(10, 0), map[string]float64{}},
		"whole hour": {
			[]change{{"a", 3, at(9, 0)}}, at(10, 0), map[string]float64{"a": 3},
		},
		"before the pool existed": {
			[]change{{"a", 3, at(11, 0)}}, at(10, 0), map[string]float64{},
		},
		"partial hour, started mid-hour": {
			[]change{{"a", 2, at(10, 15)}}, at(10, 0), map[string]float64{"a": 1.5},
		},
		"change mid-hour": {
			[]change{{"a", 2, at(9, 0)}, {"a", 4, at(10, 30)}}, at(10, 0), map[string]float64{"a": 3},
		},
		"several changes in the hour": {
			[]change{{"a", 1, at(10, 0)}, {"a", 2, at(10, 20)}, {"a", 5, at(10, 40)}},
			at(10, 0), map[string]float64{"a": (1 + 2 + 5) / 3.0},
		},
		"two sizes at once": {
			[]change{{"a", 2, at(9, 0)}, {"b", 1, at(10, 30)}, {"a", 0, at(10, 45)}},
			at(10, 0), map[string]float64{"a": 1.5, "b": 0.5},
		},
		"drops to zero": {
			[]change{{"a", 3, at(9, 0)}, {"a", 0, at(10, 20)}}, at(10, 0), map[string]float64{"a": 1},
		},
		"zero for the whole hour": {
			[]change{{"a", 3, at(9, 0)}, {"a", 0, at(10, 20)}}, at(11, 0), map[string]float64{},
		},
		"change exactly on the boundary counts in the next hour": {
			[]change{{"a", 2, at(9, 0)}, {"a", 7, at(11, 0)}}, at(10, 0), map[string]float64{"a": 2},
		},
		"change exactly on the start counts whole": {
			[]change{{"a", 2, at(9, 0)}, {"a", 7, at(11, 0)}}, at(11, 0), map[string]float64{"a": 7},
		},
		"hour argument inside the hour is truncated": {
			[]change{{"a", 2, at(10, 30)}}, at(10, 59), map[string]float64{"a": 1},
		},
		"sub-second change": {
			[]change{{"a", 1, at(10, 0).Add(1800*time.Second + 500*time.Millisecond)}},
			at(10, 0), map[string]float64{"a": (1800 - 0.5) / 3600},
		},
	} {
		tl := timelineOf(t, tc.changes...)
		require.InDeltaMapValues(t, tc.want, NodeHours(tl, tc.hour), 1e-12, name)
		require.Len(t, NodeHours(tl, tc.hour), len(tc.want), name)
	}
}

// Hours are UTC whatever zone the caller's times are in: across New York's
// spring-forward day (23 local hours) one node meters exactly 23 node-hours.
func TestNodeHoursIsDSTFree(t *testing.T) {
	ny := time.FixedZone("EST", -5*3600)
	edt := time.FixedZone("EDT", -4*3600)
	dayStart := time.Date(2025, 3, 9, 0, 0, 0, 0, ny) // before the change
	dayEnd := time.Date(2025, 3, 10, 0, 0, 0, 0, edt) // after it
	tl := timelineOf(t, change{"a", 1, dayStart.Add(-time.Hour)})
	hours := HoursToMeter(dayStart, dayEnd)
	require.Len(t, hours, 23)
	total := 0.0
	for _, h := range hours {
		require.Equal(t, time.UTC, h.Location())
		got := NodeHours(tl, h)
		require.Equal(t, map[string]float64{"a": 1}, got)
		total += got["a"]
	}
	require.Equal(t, 23.0, total)
	// A time given in another zone names the same UTC hour.
	require.Equal(t, NodeHours(tl, time.Date(2025, 3, 9, 12, 0, 0, 0, time.UTC)),
		NodeHours(tl, time.Date(2025, 3, 9, 17, 30, 0, 0, time.FixedZone("IST", 5*3600+1800))))
}

// Summing every hour's node-hours equals the integral of the node count
// computed independently, minute by minute.
func TestNodeHoursSumToTheIntegral(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		tl := randomTimeline(rng, 60)
		day := at(0, 0)
		want := map[string]float64{}
		for m := day; m.Before(day.Add(48 * time.Hour)); m = m.Add(time.Minute) {
			for size := range sizesOf(tl) {
				want[size] += float64(countAt(tl, size, m)) / 60
			}
		}
		got := map[string]float64{}
		for _, h := range HoursToMeter(day, day.Add(48*time.Hour)) {
			for size, v := range NodeHours(tl, h) {
				got[size] += v
			}
		}
		for size, v := range want {
			if v == 0 {
				delete(want, size)
			}
		}
		require.InDeltaMapValues(t, want, got, 1e-9, "trial %d", trial)
		require.Len(t, got, len(want))
	}
}

func sizesOf(tl Timeline) map[string]bool {
	out := map[string]bool{}
	for _, s := range tl.Segments {
		out[s.Size] = true
	}
	return out
}

// countAt is the count of size in force at t, by a plain scan.
func countAt(tl Timeline, size string, t time.Time) int {
	n := 0
	for _, s := range tl.Segments {
		if s.Size == size && !s.From.After(t) {
			n = s.Nodes
		}
	}
	return n
}

func BenchmarkNodeHours1000Segments(b *testing.B) {
	var tl Timeline
	sizes := []string{"s-2vcpu-4gb", "s-4vcpu-8gb", "g-8vcpu-32gb"}
	start := at(0, 0)
	for i := range 1000 {
		if err := tl.Record(sizes[i%3], 1+i%7, start.Add(time.Duration(i)*time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	last := tl.Segments[len(tl.Segments)-1].From.Truncate(time.Hour) // worst case: scans them all
	b.ReportAllocs()
	for b.Loop() {
		if len(NodeHours(tl, last)) != 3 {
			b.Fatal("expected three sizes")
		}
	}
}
