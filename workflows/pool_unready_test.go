package workflows

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// A node the pool first sees NotReady ten minutes after its Ready
// condition changed has been NotReady since the change (Karpenter's
// repair clock), with the rule; without it, since the pool looked.
func TestNotReadyClockStartsAtTheConditionChange(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	node := func(name string, state types.NodeState, changed time.Time) types.NodeObservation {
		return types.NodeObservation{Name: name, State: state, ReadyChangedAt: changed}
	}
	fold := func(rules poolcore.Rules) *PoolState {
		s := poolcore.New(contract.PoolSpec{Policy: types.DefaultPolicy()})
		s.EnsureMaps()
		s.Fold(types.PoolObservation{ObservedAt: t0, Nodes: []types.NodeObservation{
			node("late", types.NodeReady, t0.Add(-time.Hour)), node("lagged", types.NodeReady, t0.Add(-time.Hour)), node("unsaid", types.NodeReady, time.Time{}),
		}}, t0, rules)
		s.Fold(types.PoolObservation{ObservedAt: t0.Add(15 * time.Minute), Nodes: []types.NodeObservation{
			node("late", types.NodeNotReady, t0.Add(5*time.Minute)),
			node("lagged", types.NodeNotReady, t0.Add(-time.Minute)), // before the pool saw it Ready
			node("unsaid", types.NodeNotReady, time.Time{}),
		}}, t0.Add(15*time.Minute), rules)
		return s
	}
	on := fold(poolcore.Rules{NotReadyClock: true})
	for name, want := range map[string]time.Time{"late": t0.Add(5 * time.Minute), "lagged": t0, "unsaid": t0.Add(15 * time.Minute)} {
		if got := on.NotReadySince[name]; !got.Equal(want) {
			t.Errorf("%s: NotReady since %s, want %s", name, got, want)
		}
	}
	off := fold(poolcore.Rules{})
	if got := off.NotReadySince["late"]; !got.Equal(t0.Add(15 * time.Minute)) {
		t.Errorf("without the rule: since %s, want when the pool looked", got)
	}
}
