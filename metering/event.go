package metering

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// MeterNodeHours is the meter every pool reports its node-hours under.
const MeterNodeHours = "visor.node-hours"

// Dimension names carried by every node-hour event.
const (
	DimService  = "service"
	DimProject  = "project"
	DimProvider = "provider"
	DimCluster  = "cluster"
	DimSize     = "size"
	DimPool     = "pool"
)

// hourKeyLayout is the hour part of an idempotency key: YYYY-MM-DDTHH, UTC.
const hourKeyLayout = "2006-01-02T15"

// Event is the HIP's MeterEvent for one pool, size and hour. UserID is the
// org; the hour is carried explicitly so a back-filled hour is billed to
// the hour it happened, not the hour it was sent.
type Event struct {
	MeterID     string            `json:"meterId"`
	UserID      string            `json:"userId"`
	Value       float64           `json:"value"`
	Hour        time.Time         `json:"hour"`
	Idempotency string            `json:"idempotency"`
	Dimensions  map[string]string `json:"dimensions"`
}

// IdempotencyKey is "<pool workflow ID>/<size>/<YYYY-MM-DDTHH>" for the
// UTC hour containing hour.
func IdempotencyKey(pool types.PoolKey, size string, hour time.Time) string {
	return pool.WorkflowID() + "/" + size + "/" + hour.UTC().Truncate(time.Hour).Format(hourKeyLayout)
}

// EventsForHour builds one event per size that ran in the UTC hour
// containing hour, ordered by size. An hour with no nodes yields none.
func EventsForHour(pool types.PoolKey, t Timeline, hour time.Time) []Event {
	start := hour.UTC().Truncate(time.Hour)
	perSize := NodeHours(t, start)
	sizes := make([]string, 0, len(perSize))
	for size := range perSize {
		sizes = append(sizes, size)
	}
	slices.Sort(sizes)
	events := make([]Event, 0, len(sizes))
	for _, size := range sizes {
		events = append(events, Event{
			MeterID:     MeterNodeHours,
			UserID:      pool.Org,
			Value:       perSize[size],
			Hour:        start,
			Idempotency: IdempotencyKey(pool, size, start),
			Dimensions: map[string]string{
				DimService:  pool.Service,
				DimProject:  pool.Project,
				DimProvider: pool.Provider,
				DimCluster:  pool.Cluster,
				DimSize:     size,
				DimPool:     pool.WorkflowID(),
			},
		})
	}
	return events
}

// Validate reports what makes the event unfit to send, naming the event.
func (e Event) Validate() error {
	name := e.Idempotency
	switch {
	case e.Idempotency == "":
		return fmt.Errorf("meter event for %q at %s has no idempotency key", e.UserID, e.Hour.Format(time.RFC3339))
	case e.MeterID == "":
		return fmt.Errorf("meter event %s has no meter ID", name)
	case e.UserID == "":
		return fmt.Errorf("meter event %s has no user (org)", name)
	case e.Hour.IsZero() || !e.Hour.Equal(e.Hour.Truncate(time.Hour)):
		return fmt.Errorf("meter event %s: hour %s is not the start of a UTC hour", name, e.Hour.Format(time.RFC3339Nano))
	case math.IsNaN(e.Value) || math.IsInf(e.Value, 0) || e.Value < 0:
		return fmt.Errorf("meter event %s: value %v is not a finite non-negative number", name, e.Value)
	}
	return nil
}

// validateEvents checks a batch, including that no key appears twice with
// different contents (a caller bug that first-write-wins would hide).
func validateEvents(events []Event) error {
	seen := make(map[string]int, len(events))
	for i, e := range events {
		if err := e.Validate(); err != nil {
			return err
		}
		if j, dup := seen[e.Idempotency]; dup && events[j].Value != e.Value {
			return fmt.Errorf("meter event %s appears twice in one batch with values %v and %v", e.Idempotency, events[j].Value, e.Value)
		}
		seen[e.Idempotency] = i
	}
	return nil
}
