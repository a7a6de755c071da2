package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// renewal replaces drifted and expired nodes (law.ActionDisrupt): buy
// first, then drain the old ones within the disruption budget.
type renewal struct{ *pool }

// Drift and expiry (law.Rules.Lifecycle, changeLifecycle). A provider
// puts the policy's labels and taints on a group's nodes when it creates
// the group, so a group keeps launching the template it was created
// under: the pool records that template's hash per group
// (PoolState.GroupTemplates). A group of another hash is drifted: its
// nodes are replaced (law.DueNodes) and no scale-up grows it again; new
// nodes go to a group of the current template, created under a name of
// its own when the drifted one holds the plain name.

// disrupt carries out a lifecycle decision: buy the replacement of a
// drifted or expired node, or drain the nodes due (those past their
// terminationGracePeriod whatever blocks the drain).
func (p renewal) disrupt(ctx workflow.Context, d law.Decision) {
	if d.Replacing != nil {
		p.renew(ctx, d)
		return
	}
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionDisrupt), Reason: d.Reason}
	var failures []string
	for i, node := range d.RemoveNodes {
		if i > 0 {
			if why := p.scaleDownFrozen(ctx); why != "" {
				failures = append(failures, "stopped: "+why)
				break
			}
		}
		var err error
		if slices.Contains(d.Forced, node) {
			err = p.forceRemove(ctx, seq, node)
		} else {
			err = removal{p.pool}.removeNode(ctx, seq, node)
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", node, err))
			if p.rules.LifecycleRetry {
				// As scale-down's (LifecycleRetry holds only with
				// RetryBlocked): a backoff, and told once per reason with
				// the other blockers (tellBlocked).
				p.apply(ctx, poolcore.RemovalFailed{Node: node, Why: refusal(err)})
				continue
			}
			until := workflow.Now(ctx).Add(p.state.Policy.IdleWindow.D())
			p.state.DrainBlocked[node] = until
			teller{p.pool}.tellDrainBlocked(ctx, node, err, until)
			continue
		}
		rec.Removed = append(rec.Removed, node)
		p.apply(ctx, poolcore.NodeRemoved{Node: node})
	}
	if len(rec.Removed) > 0 {
		p.state.LastScaleDown = workflow.Now(ctx)
		p.state.LapseReplacement(workflow.Now(ctx), rec.Removed, p.rules)
	}
	rec.Outcome = fmt.Sprintf("removed %d of %d", len(rec.Removed), len(d.RemoveNodes))
	if len(d.Forced) > 0 {
		rec.Outcome += fmt.Sprintf(" (%s past terminationGracePeriod: drained as far as it went)", strings.Join(d.Forced, ", "))
	}
	if len(failures) > 0 {
		rec.Outcome += "; " + strings.Join(failures, "; ")
	}
	p.state.Record(rec)
}

// forceRemove drains a node as far as the drain goes, then deletes it:
// its terminationGracePeriod is over.
func (p renewal) forceRemove(ctx workflow.Context, seq int64, node string) error {
	drain := activities.DrainInput{Key: p.spec.Key, Node: node, Timeout: p.state.Policy.DrainTimeout}
	_ = p.awaitCall(ctx, workflow.ExecuteActivity(p.drainCtx(ctx, "drain (grace period over) "+node), a.DrainNode, drain), nil)
	return repairer{p.pool}.deleteMachine(ctx, seq, law.MachineAction{Name: node})
}

// renew buys the nodes that replace drifted or expired ones, one each:
// of the current template, in the first old node's offering while the
// policy still allows it.
func (p renewal) renew(ctx workflow.Context, d law.Decision) {
	r := d.Replacing
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionDisrupt), Reason: d.Reason}
	pol := p.state.Policy
	ct, zone := types.CapacityType(""), ""
	if len(pol.CapacityTypes) > 0 {
		ct = pol.CapacityTypes[0]
	}
	if len(pol.Zones) > 0 {
		zone = pol.Zones[0]
	}
	drifted := p.state.DriftedGroups(p.rules)
	k := len(r.Old)
	groupID, target := "", k
	if v := p.state.Provider; v != nil {
		for _, g := range v.Groups {
			if slices.ContainsFunc(g.Instances, func(m activities.MachineState) bool { return m.Name == r.Old[0] }) &&
				pol.CapacityTypeAllowed(g.CapacityType) && pol.ZoneAllowed(g.Zone) {
				ct, zone = g.CapacityType, g.Zone
			}
		}
		for _, g := range v.Groups {
			if g.Size == r.Size && g.CapacityType.Or() == ct.Or() && g.Zone == zone && !slices.Contains(drifted, g.ID) && (groupID == "" || g.ID < groupID) {
				groupID, target = g.ID, g.Target+k
			}
		}
	}
	if ct.Or() == types.CapacityOnDemand {
		ct = ""
	}
	in := activities.ProvisionInput{Key: p.spec.Key, Size: r.Size, GroupID: groupID, Target: target,
		IdempotencyKey: p.idempotencyKey(seq, "renew"),
		NodeLabels:     pol.NodeLabels, NodeTaints: pol.NodeTaints, CapacityType: ct, Zone: zone}
	if groupID == "" {
		in.GroupSuffix = p.state.GroupSuffix(p.rules, r.Size, ct, zone)
	}
	var res activities.ProvisionResult
	err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, fmt.Sprintf("renew: %d × %s for %s", k, r.Size, strings.Join(r.Old, ", "))), a.Provision, in), &res)
	if err != nil {
		rec.Outcome = "failed: " + err.Error()
		p.state.Record(rec)
		return
	}
	p.state.StampGroup(p.rules, res.GroupID, groupID == "", in.NodeLabels, in.NodeTaints)
	p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
	rec.Added, rec.Size = k, r.Size
	if k == 1 {
		rec.Outcome = fmt.Sprintf("asked for 1 × %s; %s drained once it is Ready", r.Size, r.Old[0])
	} else {
		rec.Outcome = fmt.Sprintf("asked for %d × %s; %s drained once they are Ready", k, r.Size, strings.Join(r.Old, ", "))
	}
	p.state.Replacing = r
	p.state.Record(rec)
}

// intoCurrentGroup points a buy that replaces a machine of a drifted group
// (repair, interruptions) at a group of the current template of the same
// offering, or at a new one, so a replacement is not itself drifted. It
// reports whether the buy may create a group, which stampGroup then records.
func (p renewal) intoCurrentGroup(in *activities.ProvisionInput) (creates bool) {
	if !p.rules.Lifecycle || p.state.Provider == nil || in.GroupID == "" || !slices.Contains(p.state.DriftedGroups(p.rules), in.GroupID) {
		return false
	}
	var old activities.GroupView
	for _, g := range p.state.Provider.Groups {
		if g.ID == in.GroupID {
			old = g
		}
	}
	drifted := p.state.DriftedGroups(p.rules)
	in.GroupID, in.Target = "", 1
	for _, g := range p.state.Provider.Groups {
		if g.Size == in.Size && g.CapacityType.Or() == old.CapacityType.Or() && g.Zone == old.Zone && !slices.Contains(drifted, g.ID) && (in.GroupID == "" || g.ID < in.GroupID) {
			in.GroupID, in.Target = g.ID, g.Target+1
		}
	}
	if in.GroupID != "" {
		return false
	}
	pol := p.state.Policy
	in.NodeLabels, in.NodeTaints, in.CapacityType, in.Zone = pol.NodeLabels, pol.NodeTaints, old.CapacityType, old.Zone
	in.GroupSuffix = p.state.GroupSuffix(p.rules, in.Size, old.CapacityType, old.Zone)
	return true
}
