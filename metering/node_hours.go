package metering

import "time"

// NodeHours integrates the timeline over the UTC hour [hour, hour+1h)
// (hour is truncated to the hour) and returns node-hours per size; sizes
// with none are left out. The last segment of a size runs on past the
// hour, so only complete hours should be metered (see HoursToMeter).
func NodeHours(t Timeline, hour time.Time) map[string]float64 {
	start := hour.UTC().Truncate(time.Hour)
	end := start.Add(time.Hour)

	// Node-nanoseconds per size, kept as integers so whole and half hours
	// come out exact.
	sums := map[string]int64{}
	add := func(size string, nodes int, from, to time.Time) {
		if from.Before(start) {
			from = start
		}
		if to.After(end) {
			to = end
		}
		if nodes > 0 && to.After(from) {
			sums[size] += int64(nodes) * int64(to.Sub(from))
		}
	}

	// A pool holds a handful of sizes, so a slice beats a map here.
	type open struct {
		size  string
		nodes int
		from  time.Time
	}
	var opens []open
next:
	for _, s := range t.Segments {
		if !s.From.Before(end) {
			break // ordered by From: nothing later touches this hour
		}
		for i := range opens {
			if opens[i].size == s.Size {
				add(s.Size, opens[i].nodes, opens[i].from, s.From)
				opens[i].nodes, opens[i].from = s.Nodes, s.From
				continue next
			}
		}
		opens = append(opens, open{s.Size, s.Nodes, s.From})
	}
	for _, o := range opens {
		add(o.size, o.nodes, o.from, end)
	}

	out := make(map[string]float64, len(sums))
	for size, ns := range sums {
		if ns > 0 {
			out[size] = float64(ns) / float64(time.Hour)
		}
	}
	return out
}
