package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// The observed half has two sources. The watcher (inside our worker, so
// trusted without a token) says whether the cluster can be sampled; its
// samples are what the pools act on. The agent (authenticated by the
// enrollment token) says how the cluster sees itself. A pool may scale down
// only when the watcher reaches the cluster, its last sample is fresh, and
// no fresh agent report says the cluster is out of sync: every source can
// only make the pools more careful, never less.

func (c *cluster) applyWatcherReport(ctx workflow.Context, r contract.WatcherReport) {
	now := workflow.Now(ctx)
	// A report dated in the future would keep the cluster from ever going
	// stale: refuse it (the watcher's clock is the worker's, near ours).
	if r.LastSync.After(now.Add(poolcore.MaxFutureSkew)) || r.At.After(now.Add(poolcore.MaxFutureSkew)) {
		c.rejectSignal(ctx, fmt.Errorf("watcher-report dated %s (last sync %s), more than %s ahead of the workflow's clock",
			r.At.UTC().Format(time.RFC3339), r.LastSync.UTC().Format(time.RFC3339), poolcore.MaxFutureSkew))
		return
	}
	if err := c.auth.systemInput(types.ClusterWorkflowID(c.state.Declared.ID), contract.SignalWatcherReport, r, r.Auth, now); err != nil {
		c.rejectSignal(ctx, err)
		return
	}
	if len(r.LastError) > poolcore.MaxTextLen {
		r.LastError = poolcore.Truncate(r.LastError, poolcore.MaxTextLen)
	}
	s := c.state
	s.WatcherReachable = r.Reachable
	if r.Reachable && r.LastSync.After(s.Observed.LastSyncAt) {
		s.Observed.LastSyncAt = r.LastSync
	}
	s.Observed.LastError = r.LastError
}

// applyAgentReport folds in a report the validator accepted.
func (c *cluster) applyAgentReport(now time.Time, r contract.ObservedReport) {
	s := c.state
	o := &s.Observed
	s.AgentSync, s.AgentReportedAt = r.SyncState, r.ReportedAt
	o.LastReportAt = now
	o.LagMillis = now.Sub(r.ReportedAt).Milliseconds()
	o.Capabilities, o.AgentVersion, o.Nodes, o.Pools = r.Capabilities, r.AgentVersion, r.Nodes, r.Pools
	c.derive(now)
}

// derive sets Reachable, SyncState and the frozen reason from the raw
// sources at now.
func (c *cluster) derive(now time.Time) {
	s := c.state
	s.Frozen = c.frozenReason(now)
	s.Observed.Reachable = s.Frozen == ""
	switch {
	case c.agentFresh(now):
		s.Observed.SyncState = s.AgentSync
	case s.WatcherReachable && c.watcherFresh(now):
		s.Observed.SyncState = contract.SyncConnected
	default:
		s.Observed.SyncState = contract.SyncDisconnected
	}
}

// frozenReason says why the pools may not scale down, or "" if they may.
func (c *cluster) frozenReason(now time.Time) string {
	s := c.state
	switch {
	case !s.WatcherReachable:
		why := s.Observed.LastError
		if why == "" {
			why = "no successful sample yet"
		}
		return "cluster unreachable: " + why
	case !c.watcherFresh(now):
		return fmt.Sprintf("observations are stale: last successful sample at %s, none within %s",
			s.Observed.LastSyncAt.UTC().Format(time.RFC3339), c.staleAfter())
	case c.agentFresh(now) && s.AgentSync != contract.SyncConnected:
		return fmt.Sprintf("cluster agent reports sync state %q", s.AgentSync)
	}
	return ""
}

func (c *cluster) watcherFresh(now time.Time) bool {
	t := c.state.Observed.LastSyncAt
	return !t.IsZero() && now.Before(t.Add(c.staleAfter()))
}

func (c *cluster) agentFresh(now time.Time) bool {
	t := c.state.Observed.LastReportAt
	return !t.IsZero() && now.Before(t.Add(c.staleAfter()))
}

// nextChange is the next moment a source goes stale, or zero if none will.
func (c *cluster) nextChange(now time.Time) time.Time {
	var at time.Time
	for _, t := range []time.Time{c.state.Observed.LastSyncAt, c.state.Observed.LastReportAt} {
		if t.IsZero() {
			continue
		}
		if stale := t.Add(c.staleAfter()); stale.After(now) && (at.IsZero() || stale.Before(at)) {
			at = stale
		}
	}
	return at
}

func (c *cluster) sampleInterval() time.Duration {
	if d := c.state.Declared.SampleInterval.D(); d > 0 {
		return d
	}
	return 30 * time.Second
}

// staleAfter bounds how old observations may be before pools freeze. It
// is never below a minute plus two samples: an unchanged watcher reports
// only once a minute, and that must not read as a partition.
func (c *cluster) staleAfter() time.Duration {
	floor := time.Minute + 2*c.sampleInterval()
	if d := c.state.Declared.StaleAfter.D(); d > 0 {
		return max(d, floor)
	}
	return 4*c.sampleInterval() + time.Minute
}
