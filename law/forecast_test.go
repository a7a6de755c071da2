package law

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// dayOfDemand feeds a model one observation a minute for days days from
// start: 8 cores (8 pods of 1 core) at night, 40 cores from 09:00 to 17:00.
func dayOfDemand(start time.Time, days int) *DemandModel {
	var m *DemandModel
	for t := time.Duration(0); t < time.Duration(days)*24*time.Hour; t += time.Minute {
		at := start.Add(t)
		pods := 8
		if h := at.Hour(); h >= 9 && h < 17 {
			pods = 40
		}
		m = ObserveDemand(m, at, types.Resources{MilliCPU: int64(pods) * 1000, Memory: int64(pods) * types.GiB, Pods: int64(pods)}, pods)
	}
	return m
}

var midnight = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// readyNodes are n Ready 4-core nodes.
func readyNodes(n int) []types.NodeObservation {
	out := make([]types.NodeObservation, n)
	for i := range out {
		out[i] = types.NodeObservation{Name: string(rune('a' + i)), State: types.NodeReady, Size: "sim-4c8g",
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 110}}
	}
	return out
}

func TestForecastNeedsADayOfHistory(t *testing.T) {
	m := dayOfDemand(midnight, 1)
	before := midnight.Add(23 * time.Hour)
	if _, ok := m.Forecast(before, before.Add(time.Minute)); ok {
		t.Fatal("a model with less than a day of history forecast")
	}
	if pods, _ := PrewarmPods(m, key(), before, 90*time.Second, readyNodes(2)); len(pods) != 0 {
		t.Fatalf("pre-warmed %d pods before a day of history", len(pods))
	}
	if pods, _ := PrewarmPods(nil, key(), before, 90*time.Second, nil); pods != nil {
		t.Fatal("a nil model pre-warmed")
	}
}

func TestPrewarmBuysAheadOfTheRise(t *testing.T) {
	m := dayOfDemand(midnight, 1)
	cases := []struct {
		name  string
		now   time.Time
		nodes int
		want  int // stand-in pods of 1 core
	}{
		{"night, room enough", midnight.Add(24*time.Hour + 3*time.Hour), 2, 0},
		{"a delay before 09:00", midnight.Add(24*time.Hour + 8*time.Hour + 59*time.Minute), 2, 40 - 8},
		{"the rise under way, half bought", midnight.Add(24*time.Hour + 9*time.Hour), 6, 40 - 24},
		{"the day's room there", midnight.Add(24*time.Hour + 12*time.Hour), 10, 0},
		{"before the rise by more than the lead", midnight.Add(24*time.Hour + 8*time.Hour + 40*time.Minute), 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods, why := PrewarmPods(m, key(), tc.now, 90*time.Second, readyNodes(tc.nodes))
			if len(pods) != tc.want {
				t.Fatalf("%d stand-in pods (%s), want %d", len(pods), why, tc.want)
			}
			for _, p := range pods {
				if p.Namespace != PrewarmNamespace || p.Requests.MilliCPU != 1000 {
					t.Fatalf("stand-in pod %+v, want the pool's 1-core shape in %s", p, PrewarmNamespace)
				}
			}
			if tc.want > 0 && !strings.Contains(why, "forecast 40.0 cores") {
				t.Errorf("why %q does not name the forecast", why)
			}
		})
	}
}

func TestPrewarmIsBoundedAndDiscountedByItsError(t *testing.T) {
	m := dayOfDemand(midnight, 1)
	m.Shape.MilliCPU, m.Shape.Memory = 10, 10<<20
	at := midnight.Add(24*time.Hour + 8*time.Hour + 59*time.Minute)
	if pods, _ := PrewarmPods(m, key(), at, 90*time.Second, nil); len(pods) != MaxPrewarmPods {
		t.Errorf("%d stand-in pods, want the bound %d", len(pods), MaxPrewarmPods)
	}
	m = dayOfDemand(midnight, 1)
	m.Error, m.Actual = 1, 4 // off by a quarter: buys for 30 of the 40 cores
	if pods, _ := PrewarmPods(m, key(), at, 90*time.Second, readyNodes(2)); len(pods) != 30-8 {
		t.Errorf("%d stand-in pods, want %d", len(pods), 30-8)
	}
}

func TestDemandModelStaysBoundedAndScoresItself(t *testing.T) {
	m := dayOfDemand(midnight, 9)
	if len(m.Day) != ForecastSlotsPerDay || len(m.Week) != ForecastSlotsPerWeek || len(m.Seen) != ForecastSlotsPerWeek {
		t.Fatalf("model holds %d/%d/%d slots, want %d/%d", len(m.Day), len(m.Week), len(m.Seen), ForecastSlotsPerDay, ForecastSlotsPerWeek)
	}
	if e := m.ForecastError(); e > 0.02 {
		t.Errorf("a model of the same day every day is off by %.0f%%", 100*e)
	}
	if m.Actual == 0 {
		t.Error("the model never scored a forecast")
	}
	// Out of order observations change nothing.
	last := m.Last
	ObserveDemand(m, last.Add(-time.Hour), types.Resources{MilliCPU: 1 << 40}, 1)
	if !m.Last.Equal(last) || m.Current.MilliCPU > 40000 {
		t.Error("an observation out of order was folded in")
	}
}

func TestPrewarmJudgesWhetherTheForecastCameTrue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pods  int
		wantT bool
	}{{"the rise came", 40, true}, {"it did not", 8, false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := dayOfDemand(midnight, 1)
			now := midnight.Add(24*time.Hour + 8*time.Hour + 59*time.Minute)
			RecordPrewarm(m, now, now.Add(90*time.Second), 32)
			for t2 := now; t2.Before(now.Add(40 * time.Minute)); t2 = t2.Add(time.Minute) {
				ObserveDemand(m, t2, types.Resources{MilliCPU: int64(tc.pods) * 1000, Memory: int64(tc.pods) * types.GiB}, tc.pods)
			}
			r := m.Prewarm
			if r == nil || !r.Judged || r.CameTrue != tc.wantT || m.Hits+m.Misses != 1 {
				t.Fatalf("record %+v, hits %d misses %d; want judged, came true %v", r, m.Hits, m.Misses, tc.wantT)
			}
		})
	}
}

func TestForecastKeepsNeverRemovesOnlyHolds(t *testing.T) {
	m := dayOfDemand(midnight, 1)
	noon := midnight.Add(24*time.Hour + 12*time.Hour)
	nodes := readyNodes(11)
	if ok, why := ForecastKeeps(m, noon, 90*time.Second, nodes, []string{"a"}); !ok {
		t.Errorf("removing one of 11 nodes (40 of 44 cores stay) held: %s", why)
	}
	if ok, why := ForecastKeeps(m, noon, 90*time.Second, nodes, []string{"a", "b"}); ok || !strings.Contains(why, "forecast expects 40.0 cores") {
		t.Errorf("removing two kept %v (%s), want held", ok, why)
	}
	night := midnight.Add(24*time.Hour + 2*time.Hour)
	if ok, _ := ForecastKeeps(m, night, 90*time.Second, nodes, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}); !ok {
		t.Error("at night the forecast held nodes it does not need")
	}
}

// Decide buys the stand-in pods without waiting, says so, and a
// forecast alone never scales in.
func TestDecidePrewarm(t *testing.T) {
	m := dayOfDemand(midnight, 1)
	now := midnight.Add(24*time.Hour + 8*time.Hour + 59*time.Minute)
	nodes := readyNodes(2)
	for i := range nodes {
		nodes[i].Requested = types.Resources{MilliCPU: 3500, Memory: 4 * types.GiB, Pods: 4}
	}
	in := input(obs(now, nodes), now)
	in.Rules = AllRules()
	in.Prewarm, in.PrewarmWhy = PrewarmPods(m, key(), now, 90*time.Second, nodes)
	d := Decide(in)
	if d.Action != ActionScaleUp || d.Prewarm != 32 || len(d.Pods) != 32 || !strings.Contains(d.Reason, "bought on forecast: room for 32 expected pods") {
		t.Fatalf("got %s prewarm %d pods %d (%s), want a scale-up bought on forecast for 32", d.Action, d.Prewarm, len(d.Pods), d.Reason)
	}
	in.Prewarm, in.PrewarmWhy = nil, ""
	if d := Decide(in); d.Action != ActionNone {
		t.Fatalf("without a forecast got %s (%s)", d.Action, d.Reason)
	}
}

// The model rides every Continue-As-New input of its pool: at its
// largest (every slot of the week seen, each at a 10,000-node pool's
// peak) its JSON stays far below Temporal's 512 KiB payload warning.
func TestDemandModelAtItsLargestStaysSmallInJSON(t *testing.T) {
	peak := Demand{MilliCPU: 10_000 * 192_000, MemMiB: 10_000 * 786_432, GPUs: 10_000 * 8}
	m := &DemandModel{Since: midnight, Last: midnight.Add(30 * 24 * time.Hour), Start: midnight, Current: peak,
		Shape: types.Resources{MilliCPU: 192_000, Memory: 768 * types.GiB, GPUs: 8, Pods: 1}, Error: 1e12, Actual: 1e13,
		Prewarm: &PrewarmRecord{}, Hits: 1 << 20, Misses: 1 << 20}
	for range ForecastSlotsPerDay {
		m.Day = append(m.Day, peak)
	}
	for range ForecastSlotsPerWeek {
		m.Week, m.Seen = append(m.Week, peak), append(m.Seen, true)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 96<<10 {
		t.Fatalf("the largest model is %d bytes of JSON, want at most 96 KiB", len(b))
	}
	t.Logf("the largest demand model is %.1f KiB of JSON", float64(len(b))/1024)
}
