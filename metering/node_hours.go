package metering

import (
	"sort"
	"time"
)

// NodeHours integrates the timeline over the UTC hour [hour, hour+1h)
// (hour is truncated to the hour) and returns node-hours per size; sizes
// with none are left out. The last segment of a size runs on past the
// hour, so only complete hours should be metered (see HoursToMeter).
func NodeHours(t Timeline, hour time.Time) map[string]float64 {
	start := hour.UTC().Truncate(time.Hour)
	end := start.Add(time.Hour)
	segs := t.Segments

	// A pool holds a handful of sizes, so a slice beats a map here.
	type open struct {
		size  string
		nodes int
		from  time.Time
	}
	var opens []open
	find := func(size string) int {
		for i := range opens {
			if opens[i].size == size {
				return i
			}
		}
		return -1
	}

	// Segments are ordered by From: the last one of each size at or
	// before start is in force when the hour begins.
	first := sort.Search(len(segs), func(i int) bool { return segs[i].From.After(start) })
	for i := first - 1; i >= 0; i-- {
		if find(segs[i].Size) < 0 {
			opens = append(opens, open{segs[i].Size, segs[i].Nodes, start})
		}
	}

	// Node-nanoseconds per size, kept as integers so whole and half hours
	// come out exact.
	sums := map[string]int64{}
	add := func(o open, to time.Time) {
		if o.nodes > 0 {
			sums[o.size] += int64(o.nodes) * int64(to.Sub(o.from))
		}
	}
	for _, s := range segs[first:] {
		if !s.From.Before(end) {
			break
		}
		if i := find(s.Size); i >= 0 {
			add(opens[i], s.From)
			opens[i].nodes, opens[i].from = s.Nodes, s.From
		} else {
			opens = append(opens, open{s.Size, s.Nodes, s.From})
		}
	}
	for _, o := range opens {
		add(o, end)
	}

	out := make(map[string]float64, len(sums))
	for size, ns := range sums {
		if ns > 0 {
			out[size] = float64(ns) / float64(time.Hour)
		}
	}
	return out
}
