package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/metering"
)

// A pool's billing tier comes from its fleet source: the cluster it is
// bound to declares it, the cluster's gate carries it, and the pool never
// takes it from its spec or a client. With trust configured the gate is
// read from the cluster workflow itself (readGate), so a forged gate
// signal cannot move it; the cluster moves it only on an administrator's
// set-tier (cluster_tier.go).

// noteLifespan marks when the pool began metering (its first meter call)
// and when it ended (the final meter of a deregistration): a BYO pool's
// management-plane hours are the part of each hour in between.
func (p billing) noteLifespan(ctx workflow.Context) {
	t := &p.state.Tiers
	if t.Start.IsZero() {
		t.Start = workflow.Now(ctx).UTC()
	}
	if p.state.Deregistering && t.End.IsZero() {
		t.End = workflow.Now(ctx).UTC()
	}
}

// hourEvents is what one hour bills, under the tier it was held under.
func (p billing) hourEvents(ctx workflow.Context, hour time.Time) []metering.Event {
	return metering.TieredEvents(p.spec.Key, p.state.HourNodeHours(hour), p.state.Tiers, hour)
}

// publishedTier is the VisorTier value.
func (p billing) publishedTier(ctx workflow.Context) string {
	return string(p.state.Tiers.Current())
}
