package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// pool list's REASON (the memo line) names the cause of every kind of
// block, not only draining and paused.
func TestReasonLineNamesEveryBlockingKind(t *testing.T) {
	now := t0.Add(time.Hour)
	overdue := pending("p1", now.Add(-10*time.Minute))
	gated := func(phase contract.ClusterPhase) func(*pool) {
		return func(p *pool) { p.state.Gate = contract.ClusterGate{Phase: phase, Reachable: true} }
	}
	heldBy := func(outcome string) func(*pool) {
		return func(p *pool) {
			p.state.Record(contract.DecisionRecord{Seq: 7, At: now.Add(-time.Minute), Action: string(law.ActionScaleUp), Reason: "1 pod pending", Outcome: outcome})
			p.state.LastScaleUp = now.Add(-time.Minute) // the law now reads a cooldown
		}
	}
	for _, tc := range []struct {
		name   string
		policy func(*types.Policy)
		setup  func(*pool)
		want   string
	}{
		{"ceiling", func(pl *types.Policy) { pl.MaxNodes = 3 }, nil, "at its ceiling of 3 nodes"},
		{"cooldown", nil, idleSince(now, func(p *pool) { p.state.LastScaleDown = now.Add(-10 * time.Second) }), "idle nodes; cooldown until"},
		{"cost budget", withCooldownPolicy, heldBy(poolcore.OutcomeNothingBought + "cost budget $0.50/h allows no more nodes"), "nothing bought: cost budget"},
		{"org limit", withCooldownPolicy, heldBy(poolcore.OutcomeNothingBought + "org acme is at its limit of 8 nodes"), "nothing bought: org acme is at its limit"},
		{"unplaceable", nil, func(p *pool) {
			p.state.Unplaceable[overdue.Key()] = "no-size-fits: needs 64 CPU, the largest allowed size has 16"
		}, "fit no allowed size (default/p1: no-size-fits"},
		{"unplaceable, held", withCooldownPolicy, heldBy(poolcore.OutcomeNothingToAdd + "1 pods fit no allowed size (default/p1: no-size-fits)"), "nothing to add: 1 pods fit no allowed size"},
		{"cluster draining", nil, gated(contract.PhaseDraining), "cluster is draining"},
		{"cluster pending", nil, gated(contract.PhasePending), "cluster is pending"},
		{"cluster disabled", nil, gated(contract.PhaseDisabled), "cluster is disabled"},
		{"frozen", nil, idleSince(now, func(p *pool) {
			p.state.Gate = contract.ClusterGate{Phase: contract.PhaseActive, Reachable: false, Reason: "watcher silent 5m"}
		}), "cluster unreachable: scale-down frozen (watcher silent 5m)"},
		{"paused", nil, func(p *pool) { p.state.Paused, p.state.PausedReason = true, "maintenance" }, "paused: maintenance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := types.DefaultPolicy()
			if tc.policy != nil {
				tc.policy(&policy)
			}
			p := &pool{state: poolcore.New(spec(policy)), rules: poolcore.AllRules()}
			p.state.Gate = contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true}
			p.state.Observation = obs(now, threeNodes(), overdue)
			if tc.setup != nil {
				tc.setup(p)
			}
			p.last = p.decide(now)
			got := publisher{p}.reasonLine()
			if !strings.Contains(got, tc.want) {
				t.Fatalf("REASON = %q, want it to contain %q (decision %+v)", got, tc.want, p.last)
			}
		})
	}
}

// idleSince makes the pool's nodes idle for an hour, with no pod pending,
// then applies more.
func idleSince(now time.Time, more func(*pool)) func(*pool) {
	return func(p *pool) {
		p.state.Observation = obs(now, []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0, 0), node("n3", 0, 0)})
		p.state.IdleSince = map[string]time.Time{"n2": now.Add(-time.Hour), "n3": now.Add(-time.Hour)}
		more(p)
	}
}

func withCooldownPolicy(pl *types.Policy) { *pl = withUpCooldown(*pl) }

// A pool with nothing to say has an empty REASON: the list shows "-".
func TestReasonLineIsEmptyWhenNothingHolds(t *testing.T) {
	now := t0.Add(time.Hour)
	p := &pool{state: poolcore.New(spec(types.DefaultPolicy())), rules: poolcore.AllRules()}
	p.state.Gate = contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true}
	p.state.Observation = obs(now, threeNodes())
	p.state.Record(contract.DecisionRecord{Seq: 1, At: now.Add(-time.Hour), Action: string(law.ActionScaleUp), Outcome: poolcore.OutcomeNothingBought + "cost budget"})
	p.last = p.decide(now)
	if got := (publisher{p}).reasonLine(); got != "" {
		t.Fatalf("REASON = %q with no pod pending, want empty (an old budget hold is over)", got)
	}
}

// Identical decisions that changed nothing fold into one record with a
// count; one that bought, or differs, starts a new record.
func TestRepeatedNothingBoughtFoldsIntoOneRecord(t *testing.T) {
	s := poolcore.New(spec(types.DefaultPolicy()))
	held := contract.DecisionRecord{Action: string(law.ActionScaleUp), Reason: "2 pods pending", Outcome: poolcore.OutcomeNothingBought + "cost budget"}
	for i := range 3 {
		r := held
		r.Seq, r.At = int64(5+i), t0.Add(time.Duration(i)*time.Second)
		s.Record(r)
	}
	if len(s.Decisions) != 1 {
		t.Fatalf("3 identical held decisions made %d records, want 1: %+v", len(s.Decisions), s.Decisions)
	}
	d := s.Decisions[0]
	if d.Seq != 5 || d.Repeats != 2 || d.LastSeq != 7 || !d.LastAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("folded record = %+v, want #5 with 2 repeats, the last #7 at +2s", d)
	}
	if seq, at := d.Newest(); seq != 7 || !at.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("Newest() = %d, %s", seq, at)
	}
	bought := contract.DecisionRecord{Seq: 8, At: t0.Add(3 * time.Second), Action: held.Action, Reason: held.Reason, Outcome: "asked for 2 × sim-4c8g", Added: 2}
	s.Record(bought)
	s.Record(contract.DecisionRecord{Seq: 9, At: t0.Add(4 * time.Second), Action: held.Action, Reason: held.Reason, Outcome: "asked for 2 × sim-4c8g", Added: 2})
	failed := contract.DecisionRecord{Seq: 10, At: t0.Add(5 * time.Second), Action: held.Action, Reason: held.Reason, Outcome: "failed: quota"}
	s.Record(failed)
	failed.Seq = 11
	s.Record(failed)
	if len(s.Decisions) != 5 {
		t.Fatalf("purchases and failures must each keep their record: got %d records: %+v", len(s.Decisions), s.Decisions)
	}
}
