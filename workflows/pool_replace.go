package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// replacer carries out a replacement consolidation: buy the cheaper
// node, and drain the old ones once it holds their pods.
type replacer struct{ *pool }

// Replacement consolidation (law.Rules.Replace), in Karpenter's order: the
// one new node is bought here and the replacement kept in the pool's
// state; the law drains the old nodes as an ordinary scale-down once the
// new node is Ready and holds their pods, and drops the replacement when
// it lapses (law.ReplacementLive).

// replace buys the replacement's new node: its size's group raised by one.
func (p replacer) replace(ctx workflow.Context, d law.Decision) {
	r := d.Replacing
	seq := p.state.NextSeq()
	rec := contract.DecisionRecord{Seq: seq, At: workflow.Now(ctx), Action: string(law.ActionReplace), Reason: d.Reason}
	// With KeepReplacement the new node is bought as the old ones were,
	// in their group's zone and capacity type: their pods may be pinned
	// there, and the drain waits for a node of their template, zone label
	// included.
	var zone string
	var ct types.CapacityType
	if p.rules.KeepReplacement {
		zone, ct = p.state.OfferingOfNode(r.Old[0])
		if label := p.state.ZoneOfNode(r.Old[0]); zone == "" && slices.Contains(p.state.SizeZones[r.Size], label) {
			// The old node's group was left to the provider's placement;
			// the new one must still land beside it.
			zone = label
		}
	}
	groupID, target := "", 1
	if v := p.state.Provider; v != nil {
		for _, g := range v.Groups {
			if g.Size != r.Size || p.rules.KeepReplacement && (g.Zone != zone || g.CapacityType.Or() != ct.Or()) {
				continue
			}
			if groupID == "" || g.ID < groupID {
				groupID, target = g.ID, g.Target+1
			}
		}
	}
	in := activities.ProvisionInput{Key: p.spec.Key, Size: r.Size, GroupID: groupID, Target: target,
		IdempotencyKey: p.idempotencyKey(seq, "replacement"),
		NodeLabels:     p.state.Policy.NodeLabels, NodeTaints: p.state.Policy.NodeTaints}
	if ct.Or() != types.CapacityOnDemand || zone != "" {
		in.CapacityType, in.Zone = ct.Or(), zone
	}
	var res activities.ProvisionResult
	err := p.awaitCall(ctx, workflow.ExecuteActivity(p.activityCtx(ctx, providerActivity, fmt.Sprintf("replacement: 1 × %s for %s", r.Size, law.Plural(len(r.Old), "node"))), a.Provision, in), &res)
	if err != nil {
		rec.Outcome = "failed: " + err.Error()
		p.state.Record(rec)
		return
	}
	p.apply(ctx, poolcore.ProviderAnswer{View: res.View, Total: res.TotalTarget})
	rec.Added, rec.Size = 1, r.Size
	rec.Outcome = fmt.Sprintf("asked for 1 × %s; %v drained once it is Ready", r.Size, r.Old)
	p.state.Replacing = r
	p.state.Record(rec)
}
