package poolcore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law/lawtest"
	"github.com/hanzoai/visor-fleet/types"
)

// base is a pool holding one observation of three busy nodes at T0, one
// node idle since before, and a provider read of three machines.
func base() *State {
	s := New(contract.PoolSpec{Key: lawtest.Key(), Policy: types.DefaultPolicy()})
	s.EnsureMaps()
	s.Observation = lawtest.Obs(lawtest.T0, lawtest.ThreeNodes())
	s.IdleSince["n3"] = lawtest.T0.Add(-time.Minute)
	s.Provider = &ProviderView{ReadAt: lawtest.T0, Groups: []GroupView{{ID: "g1", Size: "sim-4c8g", Target: 3, Instances: []MachineState{
		{ID: "i-1", Name: "n1", State: connectors.InstanceRunning, CreatedAt: lawtest.T0.Add(-time.Hour)},
		{ID: "i-2", Name: "n2", State: connectors.InstanceRunning, CreatedAt: lawtest.T0.Add(-time.Hour)},
		{ID: "i-3", Name: "n3", State: connectors.InstanceRunning, CreatedAt: lawtest.T0.Add(-time.Hour)},
	}}}}
	s.TargetNodes = 3
	s.Gate.Since = lawtest.T0
	return s
}

func snapshot(t *testing.T, s *State) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each event, good or bad, as the workflow hands it over: a bad one changes
// nothing but the rejection count and says what is wrong; a good one
// changes what it should.
func TestApply(t *testing.T) {
	now := lawtest.T0.Add(time.Minute)
	later := lawtest.Obs(now, []types.NodeObservation{lawtest.Node("n1", 0.8, 0.8), lawtest.Node("n2", 0.8, 0.8)})
	other := *later
	other.Pool.Service = "billing"
	future := *lawtest.Obs(now.Add(MaxFutureSkew+time.Second), nil)
	older := *lawtest.Obs(lawtest.T0.Add(-time.Second), nil)
	negative := *lawtest.Obs(now, []types.NodeObservation{{Name: "n9", Allocatable: types.Resources{MilliCPU: -1}}})
	view := ProviderView{ReadAt: now, Groups: []GroupView{{ID: "g1", Size: "sim-4c8g", Target: 5}}}
	cases := []struct {
		name   string
		event  Event
		reject string // "" accepts; else a word the rejection says
		check  func(t *testing.T, s *State)
	}{
		{name: "an observation of another pool", event: Observed{Observation: other}, reject: "billing"},
		{name: "an observation from the future", event: Observed{Observation: future}, reject: "ahead of the workflow's clock"},
		{name: "an observation older than the one held", event: Observed{Observation: older}, reject: "older than the one held"},
		{name: "a node with negative resources", event: Observed{Observation: negative}, reject: "n9 has negative resources"},
		{name: "a signal whose signature fails", event: Observed{Observation: *later, Authentic: func(types.PoolObservation) error { return errors.New("bad signature") }}, reject: "bad signature"},
		{name: "a newer observation", event: Observed{Observation: *later}, check: func(t *testing.T, s *State) {
			if got := len(s.Observation.Nodes); got != 2 || !s.ReceivedAt.Equal(now) {
				t.Errorf("observation has %d nodes, received %s; want 2 at %s", got, s.ReceivedAt, now)
			}
			if _, ok := s.IdleSince["n3"]; ok {
				t.Error("n3 left the cluster but its idle clock stays")
			}
		}},
		{name: "a signed observation whose signature holds", event: Observed{Observation: *later, Authentic: func(types.PoolObservation) error { return nil }}, check: func(t *testing.T, s *State) {
			if len(s.Observation.Nodes) != 2 {
				t.Error("not taken")
			}
		}},
		{name: "a provider read with another target", event: ProviderRead{View: view}, check: func(t *testing.T, s *State) {
			if s.TargetNodes != 5 || s.Provider.Target() != 5 {
				t.Errorf("target %d, provider %d; want 5", s.TargetNodes, s.Provider.Target())
			}
			if len(s.Repairs) != 1 || !strings.Contains(s.Repairs[0], "provider target is 5, the pool's last reading was 3") {
				t.Errorf("repairs %q", s.Repairs)
			}
		}},
		{name: "a provider answer without a view", event: ProviderAnswer{Total: 7}, check: func(t *testing.T, s *State) {
			if s.Provider != nil || s.TargetNodes != 7 {
				t.Errorf("provider %v, target %d; want none and 7", s.Provider, s.TargetNodes)
			}
		}},
		{name: "a gate from the future", event: GateChanged{Gate: contract.ClusterGate{Phase: contract.PhaseDraining, Since: now.Add(time.Hour)}}, reject: "ahead of the workflow's clock"},
		{name: "a gate older than the one held", event: GateChanged{Gate: contract.ClusterGate{Phase: contract.PhaseDisabled, Since: lawtest.T0.Add(-time.Hour)}}, check: func(t *testing.T, s *State) {
			if s.Gate.Phase != contract.PhaseActive {
				t.Errorf("an older gate took over: %s", s.Gate.Phase)
			}
		}},
		{name: "a draining gate", event: GateChanged{Gate: contract.ClusterGate{Phase: contract.PhaseDraining, Reachable: true, Since: now}}, check: func(t *testing.T, s *State) {
			if g := s.LawGate(); g.AllowScaleUp || !g.AllowScaleDown {
				t.Errorf("draining gate lets the law %+v", g)
			}
		}},
		{name: "a node removed", event: NodeRemoved{Node: "n3"}, check: func(t *testing.T, s *State) {
			if _, ok := s.IdleSince["n3"]; ok || len(s.Observation.Nodes) != 2 {
				t.Errorf("n3 still counted: idle clock %v, %d nodes", s.IdleSince, len(s.Observation.Nodes))
			}
		}},
		{name: "a plan's answer about sizes", event: Planned{Budget: "cost budget cut 2 nodes", SizeRoom: map[string]types.Resources{"sim-4c8g": {MilliCPU: 3900}}, SizePrice: map[string]float64{"sim-4c8g": 0.2}}, check: func(t *testing.T, s *State) {
			if s.Budget == "" || s.SizeRoom["sim-4c8g"].MilliCPU != 3900 || s.SizePrice["sim-4c8g"] != 0.2 {
				t.Errorf("budget %q, room %v, prices %v", s.Budget, s.SizeRoom, s.SizePrice)
			}
		}},
		{name: "a plan that names no size keeps the sizes known", event: Planned{}, check: func(t *testing.T, s *State) {
			s2 := base()
			s2.SizeRoom = map[string]types.Resources{"sim-4c8g": {MilliCPU: 1}}
			s2.Apply(Env{Pool: lawtest.Key(), Now: now, Rules: AllRules()}, Planned{})
			if len(s2.SizeRoom) != 1 {
				t.Error("an empty plan forgot the sizes' room")
			}
		}},
		{name: "a purchase", event: Bought{Seq: 7, Size: "sim-4c8g", NewNodes: 2, For: []types.PendingPod{lawtest.Pending("a", lawtest.T0)}}, check: func(t *testing.T, s *State) {
			if b, ok := s.BoughtFor["default/a"]; !ok || b.Seq != 7 || !b.At.Equal(now) {
				t.Errorf("bought for %v", s.BoughtFor)
			}
			if len(s.Additions) != 1 || s.Additions[0].Nodes != 2 {
				t.Errorf("additions %v", s.Additions)
			}
		}},
		{name: "a removal refused", event: RemovalFailed{Node: "n3", Why: "its PodDisruptionBudget allows no disruption now"}, check: func(t *testing.T, s *State) {
			if until := s.DrainBlocked["n3"]; !until.After(now) {
				t.Errorf("n3 is retried at %s, want after %s", until, now)
			}
			if !strings.Contains(s.DrainRefused["n3"], "PodDisruptionBudget") || s.DrainTries["n3"] != 1 {
				t.Errorf("refusal %q after %d tries", s.DrainRefused["n3"], s.DrainTries["n3"])
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			before := snapshot(t, s)
			got := s.Apply(Env{Pool: lawtest.Key(), Now: now, Rules: AllRules()}, tc.event)
			if tc.reject == "" {
				if len(got) > 0 {
					t.Fatalf("rejected: %v", got[0].Err)
				}
				tc.check(t, s)
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Err.Error(), tc.reject) {
				t.Fatalf("rejections %v, want one saying %q", got, tc.reject)
			}
			if !strings.Contains(s.LastRejected, tc.reject) || s.Rejected[got[0].What] != 1 {
				t.Errorf("rejection not recorded: last %q, counts %v", s.LastRejected, s.Rejected)
			}
			s.LastRejected, s.Rejected = "", map[string]int{}
			if after := snapshot(t, s); after != before {
				t.Errorf("a rejected event changed the state:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// Decide is the law over the state: an idle node past its window is
// removed, the status's figures come with it, and a run without the
// lifecycle rule reads no lifecycle.
func TestDecide(t *testing.T) {
	s := base()
	s.Policy.MinNodes = 1
	s.Observation.Nodes[2] = lawtest.Node("n3", 0, 0)
	now := lawtest.T0.Add(s.Policy.IdleWindow.D())
	s.IdleSince["n3"] = lawtest.T0.Add(-time.Second)
	s.Observation.ObservedAt = now
	d := s.Decide(lawtest.Key(), AllRules(), now)
	if d.Decision.Action != "scale-down" || len(d.Decision.RemoveNodes) != 1 || d.Decision.RemoveNodes[0] != "n3" {
		t.Fatalf("decided %s %v (%s), want n3 removed", d.Decision.Action, d.Decision.RemoveNodes, d.Decision.Reason)
	}
	if !d.At.Equal(now) {
		t.Errorf("decided at %s, want %s", d.At, now)
	}
	s = base()
	for i := range s.Observation.Nodes {
		s.Observation.Nodes[i].CreatedAt = lawtest.T0.Add(-time.Hour)
	}
	rules := AllRules()
	rules.Lifecycle = false
	s.Policy.ExpireAfter = types.Duration(time.Minute)
	if d := s.Decide(lawtest.Key(), rules, now); len(d.Due) != 0 || len(s.GroupTemplates) != 0 {
		t.Errorf("a run without the lifecycle rule found %d nodes due and stamped %v", len(d.Due), s.GroupTemplates)
	}
	if d := s.Decide(lawtest.Key(), AllRules(), now); len(d.Due) != 3 || s.GroupTemplates["g1"] == "" {
		t.Errorf("expireAfter 1m: %d nodes due (want 3 machines an hour old), templates %v", len(d.Due), s.GroupTemplates)
	}
}
