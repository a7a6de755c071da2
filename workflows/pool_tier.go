package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
)

// A pool's billing tier comes from its fleet source: the cluster it is
// bound to declares it, the cluster's gate carries it, and the pool never
// takes it from its spec or a client. With trust configured the gate is
// read from the cluster workflow itself (readGate), so a forged gate
// signal cannot move it; the cluster moves it only on an administrator's
// set-tier (cluster_tier.go).

// noteTier folds the gate's tier into the pool's tier history. A change
// applies from the next hour (metering.Tiers.ForHour) and is recorded as a
// decision; the first tier a pool hears is no change.
func (p *pool) noteTier(ctx workflow.Context) {
	t := &p.state.Tiers
	known, from := len(t.Changes) > 0, t.Current()
	now := workflow.Now(ctx)
	to := p.state.Gate.Tier.OrManaged()
	changed, err := t.Record(to, now)
	if err != nil {
		p.reject(ctx, "cluster-gate", err)
		return
	}
	if !changed || !known {
		return
	}
	p.state.Seq++
	p.state.Record(contract.DecisionRecord{
		Seq: p.state.Seq, At: now, Action: "tier-change",
		Reason:  fmt.Sprintf("cluster %s is billed as %s (was %s)", p.spec.Key.Cluster, to, from),
		Outcome: fmt.Sprintf("hours from %s are metered as %s; the hour in progress stays %s", now.UTC().Truncate(time.Hour).Add(time.Hour).Format("2006-01-02T15"), to, t.ForHour(now)),
	})
}

// noteLifespan marks when the pool began metering (its first meter call)
// and when it ended (the final meter of a deregistration): a BYO pool's
// management-plane hours are the part of each hour in between.
func (p *pool) noteLifespan(ctx workflow.Context) {
	t := &p.state.Tiers
	if t.Start.IsZero() {
		t.Start = workflow.Now(ctx).UTC()
	}
	if p.state.Deregistering && t.End.IsZero() {
		t.End = workflow.Now(ctx).UTC()
	}
}

// hourEvents is what one hour bills, under the tier it was held under.
func (p *pool) hourEvents(ctx workflow.Context, hour time.Time) []metering.Event {
	return metering.TieredEvents(p.spec.Key, p.hourNodeHours(hour), p.state.Tiers, hour)
}

// publishedTier is the VisorTier value.
func (p *pool) publishedTier(ctx workflow.Context) string {
	return string(p.state.Tiers.Current())
}

// tierStatus is the tier part of the status query (no workflow calls: a
// query may not make any).
func (p *pool) tierStatus(st *contract.PoolStatus) {
	t := p.state.Tiers
	st.Tier = t.Current()
	if n := len(t.Changes); n > 0 {
		st.TierSince = t.Changes[n-1].From
	}
}
