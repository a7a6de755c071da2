// Package meteringtest builds the meter events the sinks' tests store and
// send: a fixed pool, hours on one fixed day, and timelines from steps.
package meteringtest

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/types"
)

// Pool is the pool the events are for.
var Pool = types.PoolKey{Org: "acme", Project: "web", Service: "llm", Provider: "digitalocean", Cluster: "sfo3"}

// At is h:m on 2025-03-01, UTC.
func At(h, m int) time.Time { return time.Date(2025, 3, 1, h, m, 0, 0, time.UTC) }

// Change is a pool's count of one size from a moment on.
type Change struct {
	Size  string
	Nodes int
	At    time.Time
}

// Step is a Change written positionally.
func Step(size string, nodes int, at time.Time) Change { return Change{size, nodes, at} }

// TimelineOf records the changes in order; a change the timeline refuses
// fails the test.
func TimelineOf(t testing.TB, changes ...Change) metering.Timeline {
	t.Helper()
	var tl metering.Timeline
	for _, c := range changes {
		if err := tl.Record(c.Size, c.Nodes, c.At); err != nil {
			t.Fatalf("record %+v: %v", c, err)
		}
	}
	return tl
}

// DayOfEvents is a pool with two sizes (two s-2 from 00:00, one s-4 from
// 00:30) metered over hours 0..n-1.
func DayOfEvents(t testing.TB, pool types.PoolKey, n int) []metering.Event {
	tl := TimelineOf(t, Step("s-2", 2, At(0, 0)), Step("s-4", 1, At(0, 30)))
	var events []metering.Event
	for _, h := range metering.HoursToMeter(At(0, 0), At(0, 0).Add(time.Duration(n)*time.Hour)) {
		events = append(events, metering.EventsForHour(pool, tl, h)...)
	}
	return events
}
