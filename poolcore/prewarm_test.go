package poolcore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/law/lawtest"
	"github.com/hanzoai/visor-fleet/types"
)

// learnTwoDays feeds a pool two days of observations, every 5 minutes: three
// nodes a tenth used, and from 12:00 to 13:00 each day the nodes busy and
// twenty pods pending besides. It returns the state and the third day's
// midnight.
func learnTwoDays(t *testing.T, rules Rules) (*State, time.Time) {
	t.Helper()
	s := base()
	day0 := lawtest.T0.Truncate(24 * time.Hour)
	s.Observation.ObservedAt = day0.Add(-time.Minute)
	for at := day0; at.Before(day0.Add(48 * time.Hour)); at = at.Add(5 * time.Minute) {
		nodes := []types.NodeObservation{lawtest.Node("n1", 0.1, 0.1), lawtest.Node("n2", 0.1, 0.1), lawtest.Node("n3", 0.1, 0.1)}
		var pods []types.PendingPod
		if h := at.Hour(); h == 12 {
			nodes = lawtest.ThreeNodes()
			for i := range 20 {
				pods = append(pods, lawtest.Pending(fmt.Sprintf("p%d", i), at))
			}
		}
		if rej := s.Apply(Env{Pool: lawtest.Key(), Now: at, Rules: rules}, Observed{Observation: *lawtest.Obs(at, nodes, pods...)}); len(rej) > 0 {
			t.Fatalf("observation at %s rejected: %v", at, rej[0].Err)
		}
	}
	return s, day0.Add(48 * time.Hour)
}

// A pool that has seen two days with a rise at noon buys before the third
// day's noon, says so, and is judged; without the rule, or at a quiet
// hour, it buys nothing on forecast.
func TestPrewarmBuysAheadOfTheLearnedRise(t *testing.T) {
	s, day2 := learnTwoDays(t, AllRules())
	if s.Demand == nil {
		t.Fatal("the pool learned nothing")
	}
	lead := s.prewarmLead()
	now := day2.Add(12 * time.Hour).Add(-lead / 2)
	s.Observation = lawtest.Obs(now, []types.NodeObservation{lawtest.Node("n1", 0.1, 0.1), lawtest.Node("n2", 0.1, 0.1), lawtest.Node("n3", 0.1, 0.1)})
	s.ReceivedAt = now
	d := s.Decide(lawtest.Key(), AllRules(), now)
	if d.Decision.Action != "scale-up" || d.Decision.Prewarm == 0 || !strings.Contains(d.Decision.Reason, "bought on forecast") {
		t.Fatalf("before the learned rise: %s, %d on forecast (%s)", d.Decision.Action, d.Decision.Prewarm, d.Decision.Reason)
	}
	s.Prewarmed(now, d.Decision.Prewarm)
	if st := s.ForecastStatus(); !strings.Contains(st, "last bought at") {
		t.Errorf("status does not say what was bought on forecast: %q", st)
	}

	quiet := day2.Add(4 * time.Hour)
	s.Observation.ObservedAt, s.ReceivedAt = quiet, quiet
	if d := s.Decide(lawtest.Key(), AllRules(), quiet); d.Decision.Prewarm != 0 {
		t.Errorf("at 04:00, with no rise learned, bought %d on forecast: %s", d.Decision.Prewarm, d.Decision.Reason)
	}

	off := AllRules()
	off.Prewarm = false
	s2, _ := learnTwoDays(t, off)
	if s2.Demand != nil {
		t.Error("a run without the rule learned demand")
	}
	s2.Observation, s2.ReceivedAt = s.Observation, now
	if d := s2.Decide(lawtest.Key(), off, now); d.Decision.Prewarm != 0 {
		t.Errorf("a run without the rule bought %d on forecast", d.Decision.Prewarm)
	}
}

// A pool younger than a day never pre-warms, and says why.
func TestPrewarmWaitsForADayOfHistory(t *testing.T) {
	s := base()
	now := lawtest.T0.Add(time.Minute)
	s.Apply(Env{Pool: lawtest.Key(), Now: now, Rules: AllRules()}, Observed{Observation: *lawtest.Obs(now, lawtest.ThreeNodes(), lawtest.Pending("a", now))})
	if d := s.Decide(lawtest.Key(), AllRules(), now); d.Decision.Prewarm != 0 {
		t.Errorf("a pool with a minute of history bought %d on forecast", d.Decision.Prewarm)
	}
	if st := s.ForecastStatus(); !strings.Contains(st, "no pre-warm before a day of history") {
		t.Errorf("status %q", st)
	}
}
