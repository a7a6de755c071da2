package activities

import (
	"context"
	"errors"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
)

// ReportMeter hands one hour's node-hour events to the sink, which dedupes
// by idempotency key: a retry or a replayed hour is a no-op.
func (a *Activities) ReportMeter(ctx context.Context, events []metering.Event) error {
	if a.Meter == nil {
		return asTemporalError(errclass.New(errclass.Permanent, "worker", "meter", errors.New("this worker has no meter sink configured")))
	}
	return asTemporalError(a.Meter.Report(ctx, events))
}
