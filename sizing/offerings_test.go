package sizing

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

func offeringCatalog() []types.InstanceType {
	return []types.InstanceType{{
		Name: "m", MilliCPU: 2000, Memory: 4 * types.GiB, MaxPods: 10, HourlyPrice: 0.10,
		Offerings: []types.Offering{
			{Zone: "a", CapacityType: types.CapacityOnDemand, HourlyPrice: 0.10, Available: true},
			{Zone: "b", CapacityType: types.CapacityOnDemand, HourlyPrice: 0.10, Available: true},
			{Zone: "a", CapacityType: types.CapacitySpot, HourlyPrice: 0.04, Available: true},
			{Zone: "b", CapacityType: types.CapacitySpot, HourlyPrice: 0.03, Available: true},
		},
	}}
}

func TestPriceByOfferingPrefersSpotCheapestZoneThenFallsBack(t *testing.T) {
	spotFirst := OfferingRules{CapacityTypes: []types.CapacityType{types.CapacitySpot, types.CapacityOnDemand}}
	priced, offered, excluded := PriceByOffering(offeringCatalog(), spotFirst)
	c := offered["m"].Candidates
	if len(excluded) != 0 || len(c) != 2 || c[0].Zone != "b" || c[0].CapacityType != types.CapacitySpot || priced[0].HourlyPrice != 0.03 {
		t.Fatalf("spot first: %+v, %+v, excluded %v", priced[0], c, excluded)
	}
	if len(priced[0].Zones) != 2 || priced[0].Zones[0] != "b" {
		t.Errorf("zones of a zone-priced size: %v", priced[0].Zones)
	}
	until := time.Date(2026, 12, 2, 14, 5, 0, 0, time.UTC)
	spotFirst.Unavailable = map[string]time.Time{"m/b/spot": until}
	_, offered, _ = PriceByOffering(offeringCatalog(), spotFirst)
	if c := offered["m"].Candidates; c[0].Zone != "a" || c[0].CapacityType != types.CapacitySpot {
		t.Errorf("b sold out: %+v", c)
	}
	spotFirst.Unavailable["m/a/spot"] = until
	_, offered, _ = PriceByOffering(offeringCatalog(), spotFirst)
	o := offered["m"]
	if len(o.Candidates) != 1 || o.Candidates[0].CapacityType != types.CapacityOnDemand || o.Candidates[0].Zone != "" {
		t.Errorf("spot sold out everywhere: want on-demand anywhere, got %+v", o.Candidates)
	}
	why := DescribeOffering("m", o.Candidates[0], o.Notes)
	if !strings.Contains(why, "on-demand m at $0.1000/h") || !strings.Contains(why, "b until 14:05") {
		t.Errorf("reason: %s", why)
	}
	// Spot only, and every zone sold out: the size is excluded, with why.
	spotOnly := OfferingRules{CapacityTypes: []types.CapacityType{types.CapacitySpot}, Unavailable: map[string]time.Time{"m//spot": until}}
	_, _, excluded = PriceByOffering(offeringCatalog(), spotOnly)
	if !strings.Contains(excluded["m"], "spot m sold out") {
		t.Errorf("excluded: %v", excluded)
	}
	// A zone no offering has excludes the size.
	_, _, excluded = PriceByOffering(offeringCatalog(), OfferingRules{Zones: []string{"c"}})
	if !strings.Contains(excluded["m"], "no on-demand offering in zones c") {
		t.Errorf("zone c: %v", excluded)
	}
	// A plain catalog under the default rules is unchanged.
	plain := []types.InstanceType{{Name: "p", HourlyPrice: 1}}
	priced, offered, _ = PriceByOffering(plain, OfferingRules{})
	if priced[0].HourlyPrice != 1 || len(priced[0].Zones) != 0 || offered["p"].Candidates[0].Zone != "" {
		t.Errorf("plain: %+v %+v", priced, offered)
	}
}

func TestOverridePricesOnDemandOfferingsOnly(t *testing.T) {
	out, err := OverridePrices(offeringCatalog(), map[string]float64{"m": 0.2})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out[0].Offerings {
		if (o.CapacityType == types.CapacityOnDemand) != (o.HourlyPrice == 0.2) {
			t.Errorf("%+v", o)
		}
	}
	if offeringCatalog()[0].Offerings[0].HourlyPrice != 0.10 {
		t.Error("the input catalog was changed")
	}
}

func TestAdjustPrices(t *testing.T) {
	cat := append(offeringCatalog(), types.InstanceType{Name: "n", Family: "fam", HourlyPrice: 0.20}, types.InstanceType{Name: "o", Family: "other", HourlyPrice: 0.30})
	cat, err := OverridePrices(cat, map[string]float64{"o": 0.25})
	if err != nil {
		t.Fatal(err)
	}
	out, err := AdjustPrices(cat, []types.PriceAdjustment{
		{Sizes: []string{"m"}, Adjustment: "-50%"},
		{Families: []string{"fam"}, Adjustment: "-0.05"},
		{Adjustment: "+100%"},                                    // every size: o is overridden, untouched
		{Sizes: []string{"not-allowed-here"}, Adjustment: "-1%"}, // another pool's size: matches nothing
	})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].HourlyPrice != 0.05 || out[0].PriceDate != adjustedPriceDate {
		t.Errorf("m: %+v", out[0])
	}
	for _, o := range out[0].Offerings {
		want := map[types.CapacityType]float64{types.CapacityOnDemand: 0.05}[o.CapacityType]
		if o.CapacityType == types.CapacitySpot {
			want = map[string]float64{"a": 0.04, "b": 0.03}[o.Zone]
		}
		if math.Abs(o.HourlyPrice-want) > 1e-9 {
			t.Errorf("m offering %+v, want $%v (spot keeps the market's)", o, want)
		}
	}
	if math.Abs(out[1].HourlyPrice-0.15) > 1e-9 || out[2].HourlyPrice != 0.25 {
		t.Errorf("n %v (want 0.15), o %v (want its override 0.25)", out[1].HourlyPrice, out[2].HourlyPrice)
	}
	if cat[0].HourlyPrice != 0.10 {
		t.Error("the input catalog was changed")
	}
	if _, err := AdjustPrices(cat, []types.PriceAdjustment{{Adjustment: "5%"}}); err == nil || !strings.Contains(err.Error(), "priceAdjustments[0].adjustment") {
		t.Errorf("bad adjustment: %v", err)
	}
}
