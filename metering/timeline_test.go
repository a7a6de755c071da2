package metering

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// at is 2025-03-01 at h:m UTC.
func at(h, m int) time.Time { return time.Date(2025, 3, 1, h, m, 0, 0, time.UTC) }

func TestRecordAppendsOnlyChanges(t *testing.T) {
	var tl Timeline
	require.NoError(t, tl.Record("s-2", 2, at(9, 0)))
	require.NoError(t, tl.Record("s-2", 2, at(9, 5))) // same count: nothing
	require.NoError(t, tl.Record("s-2", 3, at(9, 10)))
	require.NoError(t, tl.Record("s-4", 0, at(9, 20))) // a size never seen at zero: nothing
	require.Equal(t, []Segment{{"s-2", 2, at(9, 0)}, {"s-2", 3, at(9, 10)}}, tl.Segments)
	require.Equal(t, 3, tl.Nodes("s-2"))
	require.Equal(t, map[string]int{"s-2": 3}, tl.Current())
}

func TestRecordSameInstantCoalesces(t *testing.T) {
	var tl Timeline
	require.NoError(t, tl.Record("s-2", 2, at(9, 0)))
	require.NoError(t, tl.Record("s-2", 5, at(9, 30)))
	require.NoError(t, tl.Record("s-2", 4, at(9, 30)))
	require.Equal(t, []Segment{{"s-2", 2, at(9, 0)}, {"s-2", 4, at(9, 30)}}, tl.Segments)
	// Back to the earlier count at the same instant: the change vanishes.
	require.NoError(t, tl.Record("s-2", 2, at(9, 30)))
	require.Equal(t, []Segment{{"s-2", 2, at(9, 0)}}, tl.Segments)
}

func TestRecordRejectsBadInputUnchanged(t *testing.T) {
	var tl Timeline
	require.NoError(t, tl.Record("s-2", 2, at(10, 0)))
	before := append([]Segment(nil), tl.Segments...)
	for name, tc := range map[string]struct {
		size  string
		nodes int
		at    time.Time
		want  string
	}{
		"negative":     {"s-2", -1, at(11, 0), "negative"},
		"empty size":   {"", 1, at(11, 0), "node size is empty"},
		"slash":        {"a/b", 1, at(11, 0), `"a/b" must not contain '/'`},
		"space":        {"a b", 1, at(11, 0), "must not contain"},
		"zero time":    {"s-2", 1, time.Time{}, "zero"},
		"out of order": {"s-2", 1, at(9, 0), "before the last recorded change"},
	} {
		err := tl.Record(tc.size, tc.nodes, tc.at)
		require.ErrorContains(t, err, tc.want, name)
		require.Equal(t, before, tl.Segments, name)
	}
	tl.Prune(at(12, 0))
	require.ErrorContains(t, tl.Record("s-8", 1, at(11, 0)), "before the pruned horizon")
}

func TestRecordCountsZeroesMissingSizes(t *testing.T) {
	var tl Timeline
	require.NoError(t, tl.RecordCounts(map[string]int{"b": 1, "a": 2}, at(9, 0)))
	require.NoError(t, tl.RecordCounts(map[string]int{"c": 3}, at(10, 0)))
	require.Equal(t, []Segment{
		{"a", 2, at(9, 0)}, {"b", 1, at(9, 0)},
		{"a", 0, at(10, 0)}, {"b", 0, at(10, 0)}, {"c", 3, at(10, 0)},
	}, tl.Segments)
	require.Equal(t, map[string]int{"c": 3}, tl.Current())

	// All or nothing.
	before := append([]Segment(nil), tl.Segments...)
	require.ErrorContains(t, tl.RecordCounts(map[string]int{"d": 1, "e": -2}, at(11, 0)), "negative")
	require.Equal(t, before, tl.Segments)
}

func TestPruneKeepsWhatUnmeteredHoursNeed(t *testing.T) {
	var tl Timeline
	require.NoError(t, tl.Record("a", 2, at(8, 0)))
	require.NoError(t, tl.Record("b", 1, at(8, 30)))
	require.NoError(t, tl.Record("a", 3, at(9, 15)))
	require.NoError(t, tl.Record("b", 0, at(9, 45)))
	require.NoError(t, tl.Record("a", 1, at(10, 30)))
	tl.Prune(at(10, 0))
	// a@9:15 is in force at 10:00; b fell to zero before the cut.
	require.Equal(t, []Segment{{"a", 3, at(9, 15)}, {"a", 1, at(10, 30)}}, tl.Segments)
	require.Equal(t, at(10, 0), tl.Horizon)
	require.Equal(t, map[string]float64{"a": 2}, NodeHours(tl, at(10, 0)))
}

// Pruning at the cursor never changes what any hour from the cursor on
// meters, over random timelines.
func TestPruneNeverChangesUnmeteredHours(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		tl := randomTimeline(rng, 40)
		cut := at(0, 0).Add(time.Duration(rng.IntN(24)) * time.Hour)
		var want []map[string]float64
		for h := cut; h.Before(at(23, 0)); h = h.Add(time.Hour) {
			want = append(want, NodeHours(tl, h))
		}
		pruned := Timeline{Segments: append([]Segment(nil), tl.Segments...)}
		pruned.Prune(cut)
		require.LessOrEqual(t, len(pruned.Segments), len(tl.Segments))
		i := 0
		for h := cut; h.Before(at(23, 0)); h = h.Add(time.Hour) {
			require.Equal(t, want[i], NodeHours(pruned, h), "trial %d hour %s", trial, h)
			i++
		}
	}
}

func TestTimelineJSONRoundTrip(t *testing.T) {
	var tl Timeline
	require.NoError(t, tl.Record("s-2", 2, at(9, 0)))
	tl.Prune(at(9, 0))
	b, err := json.Marshal(tl)
	require.NoError(t, err)
	var back Timeline
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, tl, back)
	b, err = json.Marshal(Timeline{})
	require.NoError(t, err)
	require.JSONEq(t, `{}`, string(b))
}

// randomTimeline records n changes at whole minutes over one day.
func randomTimeline(rng *rand.Rand, n int) Timeline {
	var tl Timeline
	sizes := []string{"s-1", "s-2", "s-4"}
	t := at(0, 0)
	for range n {
		t = t.Add(time.Duration(rng.IntN(60)) * time.Minute)
		if err := tl.Record(sizes[rng.IntN(len(sizes))], rng.IntN(5), t); err != nil {
			panic(err)
		}
	}
	return tl
}
