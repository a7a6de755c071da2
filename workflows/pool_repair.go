package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// repairer deletes or replaces machines that never joined, collects
// leaked ones, and backs off a size whose machines did not boot.
type repairer struct{ *pool }

// repair deletes machines that never became Ready nodes (backing their
// size off, so the next plan falls back to another) and replaces nodes
// NotReady too long: cordon and drain as far as possible, delete, and buy
// one of the same size.
func (p repairer) repair(ctx workflow.Context, d law.Decision) {
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionRepair), Reason: d.Reason}
	var outcomes []string
	for _, m := range d.Expire {
		err := p.deleteMachine(ctx, seq, m)
		if err == nil {
			p.state.SizeBackoff[m.Size] = workflow.Now(ctx).Add(p.state.Policy.EffectiveProvisionTimeout())
			p.state.ForgetPurchasesOf(m.Size)
			rec.Removed = append(rec.Removed, m.Name)
			p.state.NoteRepair(workflow.Now(ctx), m.Reason+": deleted, size "+m.Size+" backed off")
		}
		outcomes = append(outcomes, outcome("expired "+m.Name, err))
	}
	for _, m := range d.Replace {
		// Drain as far as it goes: a NotReady node's pods may never answer.
		drain := activities.DrainInput{Key: p.spec.Key, Node: m.Name, Timeout: p.state.Policy.DrainTimeout}
		_ = p.awaitCall(ctx, workflow.ExecuteActivity(p.drainCtx(ctx, "drain unready "+m.Name), a.DrainNode, drain), nil)
		err := p.deleteMachine(ctx, seq, m)
		if err == nil {
			rec.Removed = append(rec.Removed, m.Name)
			err = p.replaceWith(ctx, seq, m)
			if err == nil {
				rec.Added++
				rec.Size = m.Size
			}
			p.state.NoteRepair(workflow.Now(ctx), m.Reason+": replaced")
		}
		outcomes = append(outcomes, outcome("replaced "+m.Name, err))
	}
	if len(d.Collect) > 0 {
		ids := make([]string, 0, len(d.Collect))
		for _, m := range d.Collect {
			ids = append(ids, m.ID)
		}
		in := activities.CollectInput{Key: p.spec.Key, IDs: ids, IdempotencyKey: p.idempotencyKey(seq, "collect")}
		err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, fmt.Sprintf("collect %s", law.Plural(len(ids), "leaked machine"))), a.CollectLeaked, in), nil)
		if err == nil {
			p.state.NoteRepair(workflow.Now(ctx), fmt.Sprintf("collected leaked machines %s", strings.Join(ids, ", ")))
			if v := p.state.Provider; v != nil {
				v.Leaked = nil
			}
		}
		outcomes = append(outcomes, outcome("collected "+strings.Join(ids, ","), err))
	}
	rec.Outcome = strings.Join(outcomes, "; ")
	p.state.Record(rec)
}

func outcome(what string, err error) string {
	if err != nil {
		return what + " failed: " + err.Error()
	}
	return what
}

// deleteMachine deletes one machine by its node name at the provider.
func (p repairer) deleteMachine(ctx workflow.Context, seq int64, m law.MachineAction) error {
	del := activities.DeleteInput{Key: p.spec.Key, Node: m.Name, IdempotencyKey: p.idempotencyKey(seq, "delete-"+m.Name)}
	var res activities.DeleteResult
	if err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, "delete machine "+m.Name), a.DeleteNode, del), &res); err != nil {
		return err
	}
	p.state.Removed[m.Name] = workflow.Now(ctx)
	delete(p.state.NotReadySince, m.Name)
	p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
	return nil
}

// replaceWith raises the machine's group by one again: the deletion
// lowered it.
func (p repairer) replaceWith(ctx workflow.Context, seq int64, m law.MachineAction) error {
	target := 1
	groupID := ""
	if v := p.state.Provider; v != nil {
		for _, g := range v.Groups {
			if g.ID == m.GroupID {
				groupID, target = g.ID, g.Target+1
			}
		}
	}
	in := activities.ProvisionInput{Key: p.spec.Key, Size: m.Size, GroupID: groupID, Target: target,
		IdempotencyKey: p.idempotencyKey(seq, "replace-"+m.Name)}
	creates := renewal{p.pool}.intoCurrentGroup(&in) // pool_lifecycle.go
	var res activities.ProvisionResult
	if err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, fmt.Sprintf("replace %s with 1 × %s", m.Name, m.Size)), a.Provision, in), &res); err != nil {
		return err
	}
	p.state.StampGroup(p.rules, res.GroupID, creates, in.NodeLabels, in.NodeTaints)
	p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
	return nil
}
