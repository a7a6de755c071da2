package catalogs

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

func TestAWSOfferingsEveryZoneSpotCheaper(t *testing.T) {
	for _, it := range AWS() {
		onDemand, spot := 0, 0
		for _, o := range it.Offerings {
			if !strings.HasPrefix(o.Zone, "us-east-1") || !o.Available {
				t.Errorf("%s: offering %+v", it.Name, o)
			}
			switch o.CapacityType {
			case types.CapacityOnDemand:
				onDemand++
				if o.HourlyPrice != it.HourlyPrice {
					t.Errorf("%s: on-demand in %s at %v, list price %v", it.Name, o.Zone, o.HourlyPrice, it.HourlyPrice)
				}
			case types.CapacitySpot:
				spot++
				if o.HourlyPrice <= 0 || o.HourlyPrice >= it.HourlyPrice {
					t.Errorf("%s: spot in %s at %v, on-demand %v", it.Name, o.Zone, o.HourlyPrice, it.HourlyPrice)
				}
			}
		}
		if onDemand != len(awsZones) || spot < 3 {
			t.Errorf("%s: %d on-demand and %d spot offerings over %d zones", it.Name, onDemand, spot, len(awsZones))
		}
		if _, ok := awsSpot[it.Name]; !ok {
			t.Errorf("%s has no row in aws_spot.csv", it.Name)
		}
	}
	eu := InRegion(AWS(), "eu-west-1")
	if z := eu[0].Offerings[0].Zone; z != "eu-west-1a" {
		t.Errorf("InRegion: zone %q", z)
	}
	if AWS()[0].Offerings[0].Zone != "us-east-1a" {
		t.Error("InRegion changed the built-in catalog")
	}
}

func TestSpotTableErrorsNameRowAndZone(t *testing.T) {
	_, _, err := parseSpotTable("name,z1\nm6i.large,cheap\n")
	if err == nil || !strings.Contains(err.Error(), "m6i.large") || !strings.Contains(err.Error(), "z1") {
		t.Errorf("got %v", err)
	}
}

func TestSimSpotPricesAFractionInEveryZone(t *testing.T) {
	c := SimSpot()
	for _, it := range c {
		if len(it.Offerings) != 2*len(SimZones) {
			t.Fatalf("%s: %d offerings", it.Name, len(it.Offerings))
		}
		for _, o := range it.Offerings {
			want := it.HourlyPrice
			if o.CapacityType == types.CapacitySpot {
				want = it.HourlyPrice * SimSpotFraction
			}
			if d := o.HourlyPrice - want; d > 0.0001 || d < -0.0001 {
				t.Errorf("%s %s %s: %v, want %v", it.Name, o.Zone, o.CapacityType, o.HourlyPrice, want)
			}
		}
	}
	if _, err := WithOfferings(Sim(), []string{"a", "a"}); err == nil {
		t.Error("a zone listed twice was accepted")
	}
	od, _ := WithOfferings(Sim(), []string{"a"})
	if od[0].HasSpot() {
		t.Error("no fractions should mean on demand only")
	}
	for _, kind := range []string{"digitalocean", "hetzner"} {
		c, _ := Of(kind)
		for _, it := range c {
			if it.HasSpot() {
				t.Errorf("%s %s has spot", kind, it.Name)
			}
		}
	}
}
