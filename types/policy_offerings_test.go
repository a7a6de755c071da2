package types

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOfferingPolicyValidation(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(*Policy)
		want string
	}{
		"unknown capacity type": {func(p *Policy) { p.CapacityTypes = []CapacityType{"preemptible"} }, `policy.capacityTypes[0]: unknown capacity type "preemptible"`},
		"listed twice":          {func(p *Policy) { p.CapacityTypes = []CapacityType{CapacitySpot, CapacitySpot} }, `policy.capacityTypes[1]: "spot" is listed twice`},
		"empty zone":            {func(p *Policy) { p.Zones = []string{"us-east-1a", ""} }, `policy.zones[1]: must be a zone name`},
		"share above one":       {func(p *Policy) { p.CapacityTypes = []CapacityType{CapacitySpot}; p.MaxSpotShare = 1.5 }, `policy.maxSpotShare: must be a fraction within [0, 1]`},
		"share without spot":    {func(p *Policy) { p.MaxSpotShare = 0.5 }, `policy.maxSpotShare: is set but capacityTypes does not list "spot"`},
	} {
		p := DefaultPolicy()
		c.edit(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want it to contain %q", name, err, c.want)
		}
	}
	p := DefaultPolicy()
	p.CapacityTypes, p.Zones, p.MaxSpotShare = []CapacityType{CapacitySpot, CapacityOnDemand}, []string{"us-east-1a"}, 0.5
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestShareTakesFractionsAndPercentages(t *testing.T) {
	for in, want := range map[string]Share{`0.25`: 0.25, `"25%"`: 0.25, `"0.5"`: 0.5, `"100 %"`: 1} {
		var s Share
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("%s: got %v, %v; want %v", in, s, err, want)
		}
	}
	var s Share
	if err := json.Unmarshal([]byte(`"half"`), &s); err == nil || !strings.Contains(err.Error(), "percentage") {
		t.Errorf("half: got %v", err)
	}
}

func TestOfferingsOrDefault(t *testing.T) {
	plain := InstanceType{Name: "a", HourlyPrice: 1}
	if o := plain.OfferingsOrDefault(); len(o) != 1 || o[0].CapacityType != CapacityOnDemand || o[0].HourlyPrice != 1 || !o[0].Available || o[0].Zone != "" {
		t.Errorf("no zones: %+v", o)
	}
	zoned := InstanceType{Name: "a", HourlyPrice: 1, Zones: []string{"z1", "z2"}}
	if o := zoned.OfferingsOrDefault(); len(o) != 2 || o[1].Zone != "z2" {
		t.Errorf("zones: %+v", o)
	}
	p := DefaultPolicy()
	if !p.AllowsOffering(Offering{CapacityType: CapacityOnDemand}) || p.AllowsOffering(Offering{CapacityType: CapacitySpot}) {
		t.Error("the default policy allows on-demand and only on-demand")
	}
}
