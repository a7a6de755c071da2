package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
)

// Replacement consolidation (law.Rules.Replace), in Karpenter's order: the
// one new node is bought here and the replacement kept in the pool's
// state; the law drains the old nodes as an ordinary scale-down once the
// new node is Ready and holds their pods, and drops the replacement when
// it lapses (law.ReplacementLive).

// replace buys the replacement's new node: its size's group raised by one.
func (p *pool) replace(ctx workflow.Context, d law.Decision) {
	r := d.Replacing
	seq := p.nextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionReplace), Reason: d.Reason}
	groupID, target := "", 1
	if v := p.state.Provider; v != nil {
		for _, g := range v.Groups {
			if g.Size == r.Size && (groupID == "" || g.ID < groupID) {
				groupID, target = g.ID, g.Target+1
			}
		}
	}
	in := activities.ProvisionInput{Key: p.spec.Key, Size: r.Size, GroupID: groupID, Target: target,
		IdempotencyKey: p.idempotencyKey(seq, "replacement"),
		NodeLabels:     p.state.Policy.NodeLabels, NodeTaints: p.state.Policy.NodeTaints}
	var res activities.ProvisionResult
	err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, fmt.Sprintf("replacement: 1 × %s for %s", r.Size, law.Plural(len(r.Old), "node"))), a.Provision, in), &res)
	if err != nil {
		rec.Outcome = "failed: " + err.Error()
		p.state.record(rec)
		return
	}
	p.adoptResult(ctx, res.View, res.TotalTarget)
	rec.Added, rec.Size = 1, r.Size
	rec.Outcome = fmt.Sprintf("asked for 1 × %s; %v drained once it is Ready", r.Size, r.Old)
	p.state.Replacing = r
	p.state.record(rec)
}

// lapseReplacement drops the replacement under way once it is no longer
// live, or once a removal took one of its old nodes.
func (s *PoolState) lapseReplacement(now time.Time, removed []string) {
	r := s.Replacing
	if r == nil {
		return
	}
	if slices.ContainsFunc(removed, func(n string) bool { return slices.Contains(r.Old, n) }) ||
		!law.ReplacementLive(s.Policy, r, s.Observation, now) {
		s.Replacing = nil
	}
}
