package sizing

import (
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
