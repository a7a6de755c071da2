package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/metering"
)

// billing bills the hours the provider ran, back-filling hours missed while
// workers were down, under the billing tier that held (pool_tier.go).
type billing struct{ *pool }

// The meter bills what the provider ran: every read of the pool's node
// groups (resync, the read before an action, an action's answer) is
// folded into PoolState.Machines, each machine from the creation time the
// provider reports to the end time it reports (or, when it reports none,
// the first read that no longer lists it). An hour is billed only once a
// read taken after the hour's end has been seen, so a worker gone or an
// observation gone stale neither drops nor invents machine time: the next
// read after the gap tells what ran in it..

// meterReadRetry is how long the meter waits before reading the provider
// again when a read it needed to close an hour failed.
const meterReadRetry = 30 * time.Second

// meter reports every complete hour since the cursor, back-filling hours
// missed while workers were down. The cursor moves only after the sink
// accepted the hour, and the sink dedupes by idempotency key, so an hour is
// never skipped nor doubled.
func (p billing) meter(ctx workflow.Context) {
	p.meterThrough(ctx, workflow.Now(ctx))
}

// meterThrough bills every hour that ends by now. With provider truth an
// hour waits for a provider read taken after its end (one is made if
// none was), except in a deregistration's final meter, which follows the
// release and its read: nothing runs after it.
func (p billing) meterThrough(ctx workflow.Context, now time.Time) {
	p.noteLifespan(ctx)
	for _, hour := range metering.HoursToMeter(p.state.MeterCursor, now) {
		if !p.truthCovers(ctx, hour.Add(time.Hour)) {
			return
		}
		events := p.hourEvents(ctx, hour)
		if len(events) > 0 {
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				TaskQueue:           p.meterTaskQueue(),
				Summary:             "meter " + hour.Format("2006-01-02T15"),
				StartToCloseTimeout: time.Minute,
				RetryPolicy: &temporal.RetryPolicy{
					InitialInterval:    5 * time.Second,
					BackoffCoefficient: 2,
					MaximumInterval:    5 * time.Minute,
					MaximumAttempts:    20,
				},
			})
			if err := workflow.ExecuteActivity(actx, a.ReportMeter, events).Get(ctx, nil); err != nil {
				// Keep the cursor: the hour is retried on the next wake-up.
				p.reject(ctx, "meter", err)
				return
			}
		}
		p.state.MeterCursor = hour.Add(time.Hour)
		p.state.Machines.Prune(p.state.MeterCursor)
		p.state.Tiers.Prune(p.state.MeterCursor)
	}
}

// truthCovers makes sure the provider's truth is known through end before
// an hour ending then is billed: it reads the provider when the last read
// is older, and on a failed read holds the hour back for meterReadRetry.
func (p billing) truthCovers(ctx workflow.Context, end time.Time) bool {
	m := &p.state.Machines
	if m.Covers(end) || p.state.Deregistering {
		return true
	}
	if workflow.Now(ctx).Before(p.meterRetryAt) {
		return false
	}
	if p.readProvider(ctx) && m.Covers(end) {
		return true
	}
	p.meterRetryAt = workflow.Now(ctx).Add(meterReadRetry)
	return false
}

// meterTaskQueue: metering runs beside the workflows, not in a tenant's
// account, since it reports to the platform's ledger.
func (p billing) meterTaskQueue() string { return "" }

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
