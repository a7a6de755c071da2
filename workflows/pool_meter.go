package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/metering"
)

// recordNodeCount folds the pool's current composition (observed nodes per
// size) into the metering timeline, at workflow time.
func (p *pool) recordNodeCount(ctx workflow.Context) {
	counts := map[string]int{}
	if obs := p.state.Observation; obs != nil {
		for _, n := range obs.Nodes {
			size := n.Size
			if size == "" {
				size = "unknown"
			}
			counts[size]++
		}
	}
	if err := p.state.Meter.RecordCounts(counts, workflow.Now(ctx)); err != nil {
		p.reject(ctx, "meter", err)
	}
}

// meter reports every complete hour since the cursor, back-filling hours
// missed while workers were down. The cursor moves only after the sink
// accepted the hour, and the sink dedupes by idempotency key, so an hour is
// never skipped nor doubled.
func (p *pool) meter(ctx workflow.Context) {
	p.meterThrough(ctx, workflow.Now(ctx))
}

func (p *pool) meterThrough(ctx workflow.Context, now time.Time) {
	p.noteLifespan(ctx)
	for _, hour := range metering.HoursToMeter(p.state.MeterCursor, now) {
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
		p.state.Meter.Prune(p.state.MeterCursor)
		p.state.Tiers.Prune(p.state.MeterCursor)
	}
}

// meterTaskQueue: metering runs beside the workflows, not in a tenant's
// account, since it reports to the platform's ledger.
func (p *pool) meterTaskQueue() string { return "" }
