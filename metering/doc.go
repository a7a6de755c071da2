// Package metering turns a pool's node-count history into exactly-once
// hourly node-hour events and delivers them to a sink.
//
// This package is the pure half (Timeline, NodeHours, EventsForHour,
// HoursToMeter, Tiers): it runs inside the pool workflow and reads only its
// arguments, so it is deterministic and replay-safe. The sinks (packages
// metering/ledger and metering/httpsink) run inside an activity.
// Exactly-once comes from the per-event idempotency key
// "<pool ID>/<size>/<YYYY-MM-DDTHH>": the workflow advances its meter
// cursor only after the sink accepted an hour, and every sink treats a
// repeated key as a no-op, so a retried or crashed report never counts
// twice.
package metering
