package metering

import "time"

// HoursToMeter lists every complete UTC hour from the cursor (the start of
// the next hour to meter) up to now, oldest first. After a worker outage it
// returns all the missed hours, so none is skipped; the caller moves the
// cursor past an hour only once a sink accepted it, so none is doubled.
//
// A cursor inside an hour is truncated down to that hour: before a pool's
// first change the timeline holds no nodes, so the partial hour meters only
// what really ran. A zero cursor means metering has not started: nil.
func HoursToMeter(cursor time.Time, now time.Time) []time.Time {
	if cursor.IsZero() {
		return nil
	}
	first := cursor.UTC().Truncate(time.Hour)
	n := int(now.Sub(first) / time.Hour)
	if n <= 0 {
		return nil
	}
	hours := make([]time.Time, n)
	for i := range hours {
		hours[i] = first.Add(time.Duration(i) * time.Hour)
	}
	return hours
}
