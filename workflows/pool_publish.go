package workflows

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// publisher tells the outside what the pool decided: search attributes,
// memo, the Web UI's details and metrics (pool_metrics.go).
type publisher struct{ *pool }

// Typed search attribute keys (docs/design.md).
var (
	saOrg          = temporal.NewSearchAttributeKeyKeyword(contract.SAOrg)
	saProject      = temporal.NewSearchAttributeKeyKeyword(contract.SAProject)
	saService      = temporal.NewSearchAttributeKeyKeyword(contract.SAService)
	saProvider     = temporal.NewSearchAttributeKeyKeyword(contract.SAProvider)
	saCluster      = temporal.NewSearchAttributeKeyKeyword(contract.SACluster)
	saState        = temporal.NewSearchAttributeKeyKeyword(contract.SAState)
	saClusterPhase = temporal.NewSearchAttributeKeyKeyword(contract.SAClusterPhase)
	saRegion       = temporal.NewSearchAttributeKeyKeyword(contract.SARegion)
	saTier         = temporal.NewSearchAttributeKeyKeyword(contract.SATier)
	saNodes        = temporal.NewSearchAttributeKeyInt64(contract.SANodes)
	saTargetNodes  = temporal.NewSearchAttributeKeyInt64(contract.SATargetNodes)
	saPendingPods  = temporal.NewSearchAttributeKeyInt64(contract.SAPendingPods)
	saLastScale    = temporal.NewSearchAttributeKeyTime(contract.SALastScale)
)

// saSnapshot is what was last upserted, so unchanged values cost nothing.
type saSnapshot struct {
	state, phase, region string
	tier                 string
	nodes, target, pods  int
	lastScale            time.Time
	set                  bool
}

// publish keeps the search attributes and the current details in step with
// the state, so the Web UI shows the pool at a glance.
func (p publisher) publish(ctx workflow.Context) {
	s := p.state
	now := saSnapshot{
		state: p.state.StateName(p.last.Frozen), phase: string(s.Gate.Phase), region: s.Gate.Region,
		nodes: s.ObservedNodes(), target: s.NodeCount(), pods: s.PendingPods(),
		lastScale: slices.MaxFunc([]time.Time{s.LastScaleUp, s.LastScaleDown}, time.Time.Compare), set: true,
		tier: billing{p.pool}.publishedTier(ctx), // pool_tier.go
	}
	if now != p.lastSA {
		updates := []temporal.SearchAttributeUpdate{
			saOrg.ValueSet(p.spec.Key.Org), saProject.ValueSet(p.spec.Key.Project),
			saService.ValueSet(p.spec.Key.Service), saProvider.ValueSet(p.spec.Key.Provider),
			saCluster.ValueSet(p.spec.Key.Cluster), saState.ValueSet(now.state),
			saNodes.ValueSet(int64(now.nodes)), saTargetNodes.ValueSet(int64(now.target)),
			saPendingPods.ValueSet(int64(now.pods)),
		}
		if now.phase != "" {
			updates = append(updates, saClusterPhase.ValueSet(now.phase))
		}
		if now.region != "" {
			updates = append(updates, saRegion.ValueSet(now.region))
		}
		if now.tier != "" {
			updates = append(updates, saTier.ValueSet(now.tier))
		}
		if !now.lastScale.IsZero() {
			updates = append(updates, saLastScale.ValueSet(now.lastScale))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
			workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
		} else {
			p.lastSA = now
		}
	}
	if details := p.details(); details != p.lastDetails {
		workflow.SetCurrentDetails(ctx, details)
		p.lastDetails = details
	}
	p.publishMemo(ctx)
	p.emitMetrics(ctx)
}

// publishMemo keeps the memo `pool list` and `pool apply` read without
// querying the pool: why it does not act, and which policy it runs.
func (p publisher) publishMemo(ctx workflow.Context) {
	memo := memoSnapshot{reason: p.reasonLine(), policy: contract.PolicyHash(p.state.Policy)}
	fields := map[string]any{contract.MemoPoolReason: memo.reason, contract.MemoPolicyHash: memo.policy}
	// In cents, so price noise does not rewrite the memo.
	memo.cents = int64(math.Round(p.state.HourlyCost() * 100))
	fields[contract.MemoPoolHourlyCost] = float64(memo.cents) / 100
	if memo == p.lastMemo {
		return
	}
	if err := workflow.UpsertMemo(ctx, fields); err != nil {
		workflow.GetLogger(ctx).Warn("memo not updated", "error", err)
		return
	}
	p.lastMemo = memo
}

type memoSnapshot struct {
	reason, policy string
	cents          int64
}

// reasonLine is one short line saying why the pool does not act, or "".
func (p publisher) reasonLine() string {
	s := p.state
	switch {
	case s.Deregistering:
		return "deregistering"
	case s.Paused:
		return poolcore.Truncate("paused: "+s.PausedReason, 120)
	case p.last.Frozen != "":
		return poolcore.Truncate(p.last.Frozen, 120)
	case s.Gate.Phase == contract.PhaseDisabled || s.Gate.Phase == contract.PhasePending:
		return "cluster " + string(s.Gate.Phase)
	}
	// A scale-up that bought nothing (cost budget, org limit, pods that fit
	// no size) is the cause while its pods wait, even though the law's own
	// line then reads as the cooldown that follows it.
	if held := s.HeldScaleUp(); held != "" {
		return poolcore.Truncate(held, 120)
	}
	if len(p.last.Blocked) > 0 {
		return poolcore.Truncate(p.last.Blocked[0], 120)
	}
	if p.rules.RetryBlocked {
		if line := p.state.KeptIdleLine(p.last.Held); line != "" {
			return poolcore.Truncate(line, 120)
		}
	}
	if len(s.Unplaceable) > 0 {
		return poolcore.Truncate(p.state.UnplaceableSummary(), 120)
	}
	return ""
}

// details is the markdown the Web UI shows on the workflow's page.
func (p publisher) details() string {
	s := p.state
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s/%s/%s on %s (%s)\n\n", p.state.StateName(p.last.Frozen), p.spec.Key.Org, p.spec.Key.Project, p.spec.Key.Service, p.spec.Key.Cluster, p.spec.Key.Provider)
	fmt.Fprintf(&b, "nodes %d (target %d, floor %d, ceiling %d) · pending pods %d\n\n", s.ObservedNodes(), s.NodeCount(), s.Policy.MinNodes, s.Policy.MaxNodes, s.PendingPods())
	if s.Paused {
		fmt.Fprintf(&b, "paused: %s\n\n", s.PausedReason)
	}
	if p.last.Frozen != "" {
		fmt.Fprintf(&b, "frozen: %s\n\n", p.last.Frozen)
	}
	for _, bl := range p.last.Blocked {
		fmt.Fprintf(&b, "blocked: %s\n\n", bl)
	}
	if n := s.InFlight(); n > 0 {
		fmt.Fprintf(&b, "booting: %s asked for, not Ready nodes yet\n\n", law.Plural(n, "machine"))
	}
	for _, key := range workflow.DeterministicKeys(s.NoHelp) {
		fmt.Fprintf(&b, "no help: %s: %s\n\n", key, s.NoHelp[key])
	}
	for _, sk := range p.last.Skipped {
		fmt.Fprintf(&b, "not removed: %s\n\n", sk)
	}
	if p.rules.RetryBlocked {
		kept := p.state.KeptIdleNodes(p.last.Held)
		for _, name := range workflow.DeterministicKeys(kept) {
			fmt.Fprintf(&b, "kept idle: %s: %s\n\n", name, kept[name])
		}
	} else {
		for _, name := range workflow.DeterministicKeys(p.last.Held) {
			fmt.Fprintf(&b, "kept idle: %s: %s\n\n", name, p.last.Held[name])
		}
	}
	if p.decided.Capacity != "" {
		fmt.Fprintf(&b, "capacity: %s\n\n", p.decided.Capacity)
	}
	if s.Budget != "" {
		fmt.Fprintf(&b, "budget: %s\n\n", s.Budget)
	}
	if n := len(s.Repairs); n > 0 {
		fmt.Fprintf(&b, "last correction: %s\n\n", s.Repairs[n-1])
	}
	if n := len(s.Decisions); n > 0 {
		d := s.Decisions[n-1]
		fmt.Fprintf(&b, "last decision #%d %s: %s → %s\n\n", d.Seq, d.Action, d.Reason, d.Outcome)
		if d.Repeats > 0 {
			fmt.Fprintf(&b, "the same again %d more times, the last #%d at %s\n\n", d.Repeats, d.LastSeq, d.LastAt.UTC().Format(time.RFC3339))
		}
	}
	if p.last.WakeReason != "" && !p.last.WakeAt.IsZero() {
		fmt.Fprintf(&b, "next: %s at %s\n", p.last.WakeReason, p.last.WakeAt.UTC().Format(time.RFC3339))
	}
	return b.String()
}
