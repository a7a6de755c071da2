package score

import (
	"math"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

func spotRun(t *testing.T, spot *Spot) Run {
	t.Helper()
	catalog := catalogs.Sim()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 1000      // the trace, not the ceiling, sets the waits
	tr := SyntheticTraces(1)[0] // diurnal
	r, err := Simulate(tr, catalog, policy, NewLaw("visor law", policy, catalog), Options{Spot: spot})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSpotVariantSavesAndPaysForItsInterruptions(t *testing.T) {
	od := spotRun(t, nil)
	if od.Interruptions != 0 || od.Disrupted != 0 {
		t.Fatalf("on-demand run was interrupted: %d", od.Interruptions)
	}
	// No interruptions: the same decisions, every node at the spot price.
	calm := spotRun(t, &Spot{PriceFactor: 0.35})
	if math.Abs(calm.Cost-0.35*od.Cost) > 1e-6*od.Cost || calm.NodeHours != od.NodeHours {
		t.Fatalf("without interruptions the spot run should cost 0.35× on-demand with the same node-hours: %.4f vs %.4f, %.2f vs %.2f node-h",
			calm.Cost, od.Cost, calm.NodeHours, od.NodeHours)
	}
	model := Spot{PriceFactor: 0.35, InterruptionsPerNodeHour: 0.05, Seed: 3}
	hit := spotRun(t, &model)
	if hit.Interruptions == 0 || hit.Disrupted == 0 {
		t.Fatalf("0.05 interruptions per node-hour over %.0f node-hours interrupted nothing", hit.NodeHours)
	}
	if want := 0.05 * hit.NodeHours; float64(hit.Interruptions) < want/3 || float64(hit.Interruptions) > want*3 {
		t.Errorf("%d interruptions over %.0f node-hours at 0.05/node-h (expected about %.0f)", hit.Interruptions, hit.NodeHours, want)
	}
	if hit.Cost >= od.Cost {
		t.Errorf("spot with interruptions costs %.2f, on-demand %.2f", hit.Cost, od.Cost)
	}
	if hit.StillPending != 0 {
		t.Errorf("%d pods left pending after interruptions", hit.StillPending)
	}
	// A disrupted pod waits for the replacement (a boot) or, when others
	// took its room, for the next scale-up: the threshold and another boot.
	limit := types.DefaultPolicy().PendingThreshold.D() + 2*time.Minute + 2*time.Minute
	for i, w := range hit.Waits {
		if w > limit+od.Waits[i] {
			t.Errorf("pod %d waited %s with interruptions, %s without", i, w, od.Waits[i])
			break
		}
	}
	again := spotRun(t, &model)
	if again.Interruptions != hit.Interruptions || again.Cost != hit.Cost {
		t.Errorf("the seeded model is not reproducible: %d/%.4f then %d/%.4f", hit.Interruptions, hit.Cost, again.Interruptions, again.Cost)
	}
}

func TestSpotPricesUseTheCatalogsSpotOffering(t *testing.T) {
	c := []types.InstanceType{
		{Name: "a", HourlyPrice: 1, Offerings: []types.Offering{
			{Zone: "z1", CapacityType: types.CapacitySpot, HourlyPrice: 0.4, Available: true},
			{Zone: "z2", CapacityType: types.CapacitySpot, HourlyPrice: 0.3, Available: true},
			{Zone: "z3", CapacityType: types.CapacitySpot, HourlyPrice: 0.1, Available: false},
			{Zone: "z1", CapacityType: types.CapacityOnDemand, HourlyPrice: 1, Available: true},
		}},
		{Name: "b", HourlyPrice: 2},
	}
	got := SpotPrices(c, 0.5)
	if got[0].HourlyPrice != 0.3 || got[1].HourlyPrice != 1 {
		t.Fatalf("spot prices %v, %v: want the cheapest available spot offering (0.3), else half of on-demand (1)", got[0].HourlyPrice, got[1].HourlyPrice)
	}
	if c[0].HourlyPrice != 1 {
		t.Fatal("the catalog given was changed")
	}
}
