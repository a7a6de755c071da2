package score

import (
	"slices"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// On the diurnal day, with two earlier days learnt, the law pre-warms:
// p90 wait below the 60 s provisioning delay, at most 5 % more than the
// law without it, nothing busy removed or stranded, and the model's
// forecast within 15 % of the day's peaks.
func TestPrewarmOnTheDiurnalDay(t *testing.T) {
	if testing.Short() {
		t.Skip("two simulated days")
	}
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 500
	tr, history := SyntheticTraces(1)[0], PrewarmHistory(1)[0]
	base, err := Simulate(tr, catalog, policy, NewLaw("visor law", policy, catalog), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := policy
	p.ProvisioningDelay = types.Duration(time.Minute)
	l := NewLawPrewarm("visor law", p, catalog, AllRules(), history)
	with, err := Simulate(tr, catalog, policy, l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := l.PrewarmStats()
	waits := slices.Clone(with.Waits)
	slices.Sort(waits)
	p90 := quantile(waits, 0.90)
	t.Logf("cost %.2f -> %.2f, p90 %s, %+v", base.Cost, with.Cost, p90, st)
	if st.ScaleUps == 0 || st.Pods == 0 {
		t.Fatalf("no pre-warm: %+v", st)
	}
	if p90 >= time.Minute {
		t.Errorf("p90 wait %s, want below the 60 s provisioning delay", p90)
	}
	if with.Cost > 1.05*base.Cost {
		t.Errorf("cost $%.2f with pre-warm, more than 5 %% over $%.2f without", with.Cost, base.Cost)
	}
	if with.BusyRemovals != 0 || with.Stranded != 0 {
		t.Errorf("%d busy removals, %d stranded", with.BusyRemovals, with.Stranded)
	}
	if st.ForecastError <= 0 || st.ForecastError > 0.15 {
		t.Errorf("forecast error %.1f%%, want within (0, 15 %%]", 100*st.ForecastError)
	}
}

// Without history the law with pre-warm on never pre-warms.
func TestPrewarmNeedsHistory(t *testing.T) {
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 200
	l := NewLawPrewarm("visor law", policy, catalog, AllRules(), Trace{Name: "none"})
	if _, err := Simulate(shortTrace(), catalog, policy, l, Options{}); err != nil {
		t.Fatal(err)
	}
	if st := l.PrewarmStats(); st.ScaleUps != 0 {
		t.Fatalf("pre-warmed without a day of history: %+v", st)
	}
}

func TestDaysShiftsEachDay(t *testing.T) {
	a := Trace{Name: "a", Pods: []Pod{{Name: "p", Arrive: time.Hour, Depart: 2 * time.Hour, Requests: types.Resources{MilliCPU: 1, Pods: 1}}}}
	d := Days(a, a)
	if len(d.Pods) != 2 || d.Pods[1].Arrive != 25*time.Hour || d.Pods[1].Depart != 26*time.Hour || d.Pods[0].Name == d.Pods[1].Name {
		t.Fatalf("days %+v", d.Pods)
	}
}
