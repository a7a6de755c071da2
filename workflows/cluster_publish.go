package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ClusterMemoDeclared is the memo key holding the declared half, so
// listings (and the metrics-label check) read it without a worker.
const ClusterMemoDeclared = "declared"

// publish keeps the phase search attribute, the memo and the Web UI's
// current details in step with the state, writing only on change.
func (c *cluster) publish(ctx workflow.Context) {
	d := c.state.Declared
	if string(d.Phase) != c.published {
		updates := []temporal.SearchAttributeUpdate{saClusterPhase.ValueSet(string(d.Phase))}
		if d.Region != "" {
			updates = append(updates, saRegion.ValueSet(d.Region))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
			workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
		} else {
			c.published = string(d.Phase)
		}
		if err := workflow.UpsertMemo(ctx, map[string]any{ClusterMemoDeclared: d}); err != nil {
			workflow.GetLogger(ctx).Warn("memo not updated", "error", err)
		}
	}
	if details := c.describe(); details != c.details {
		workflow.SetCurrentDetails(ctx, details)
		c.details = details
	}
}

// describe is the markdown the Web UI shows on the cluster's page.
func (c *cluster) describe() string {
	s := c.state
	d, o := s.Declared, s.Observed
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · cluster %s (%s, %s)\n\n", d.Phase, d.ID, d.Provider, orDash(d.Region))
	fmt.Fprintf(&b, "reachable %t · sync %s · %d pools registered\n\n", o.Reachable, o.SyncState, len(s.Pools))
	if s.Frozen != "" {
		fmt.Fprintf(&b, "pools frozen: %s\n\n", s.Frozen)
	}
	if !o.LastSyncAt.IsZero() {
		fmt.Fprintf(&b, "last sample %s\n\n", o.LastSyncAt.UTC().Format(time.RFC3339))
	}
	if pc := s.LastPhaseChange; pc != nil {
		fmt.Fprintf(&b, "phase %s → %s by %s: %s\n\n", pc.From, pc.To, orDash(pc.RequestedBy), pc.Reason)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
