package types

import (
	"math"
	"strings"
	"testing"
)

func TestAdjustedPrice(t *testing.T) {
	five := 0.05
	adjs := []PriceAdjustment{
		{Adjustment: "-10%"},                               // every size
		{Families: []string{"m5"}, Adjustment: "-30%"},     // the m5 family
		{Sizes: []string{"m5.large"}, Price: &five},        // one size, absolute
		{Families: []string{"m5"}, Adjustment: "+50%"},     // later, equally specific: loses
		{Sizes: []string{"c5.large"}, Adjustment: "-0.02"}, // dollars per hour
		{Sizes: []string{"t3.nano"}, Adjustment: "-100.0"}, // never below zero
		{Families: []string{"r5"}, Adjustment: "+0%"},      // a no-op still matches
	}
	for _, c := range []struct {
		size, family string
		list, want   float64
	}{
		{"m5.large", "m5", 0.10, 0.05},
		{"m5.xlarge", "m5", 0.20, 0.14},
		{"c5.large", "c5", 0.09, 0.07},
		{"c5.xlarge", "c5", 0.20, 0.18},
		{"t3.nano", "t3", 0.01, 0},
		{"r5.large", "r5", 0.15, 0.15},
		{"x", "", 1, 0.9},
	} {
		got, ok := AdjustedPrice(adjs, c.size, c.family, c.list)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: got %v (%v), want %v", c.size, got, ok, c.want)
		}
	}
	if got, ok := AdjustedPrice(adjs[1:2], "c5.large", "c5", 0.09); ok || got != 0.09 {
		t.Errorf("an m5 entry adjusted c5.large: %v %v", got, ok)
	}
}

func TestValidatePriceAdjustmentsNamesTheField(t *testing.T) {
	neg, one := -1.0, 1.0
	for _, c := range []struct {
		adj  PriceAdjustment
		org  bool
		want string
	}{
		{PriceAdjustment{}, false, "x[0]: give price"},
		{PriceAdjustment{Price: &one, Adjustment: "-1%"}, false, "not both"},
		{PriceAdjustment{Price: &neg}, false, "x[0].price: must be within"},
		{PriceAdjustment{Adjustment: "10%"}, false, "x[0].adjustment: \"10%\": write a signed percent"},
		{PriceAdjustment{Adjustment: "-abc%"}, false, "x[0].adjustment: \"-abc%\": not a percent"},
		{PriceAdjustment{Adjustment: "-150%"}, false, "within [-100%, +1000%]"},
		{PriceAdjustment{Adjustment: "+1e9"}, false, "at most"},
		{PriceAdjustment{Adjustment: "-1%", Sizes: []string{"a"}, Families: []string{"b"}}, false, "sizes or families, not both"},
		{PriceAdjustment{Adjustment: "-1%", Sizes: []string{""}}, false, "x[0].sizes[0]"},
		{PriceAdjustment{Adjustment: "-1%", Org: "acme"}, false, "x[0].org: a pool's own"},
		{PriceAdjustment{Adjustment: "-1%", Org: "Not_DNS"}, true, "x[0].org"},
	} {
		err := ValidatePriceAdjustments("x", []PriceAdjustment{c.adj}, c.org)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.adj, err, c.want)
		}
	}
	if err := ValidatePriceAdjustments("x", []PriceAdjustment{{Org: "acme", Families: []string{"m5"}, Adjustment: "-25%"}, {Price: &one}}, true); err != nil {
		t.Errorf("valid entries refused: %v", err)
	}
	p := DefaultPolicy()
	p.PriceAdjustments = []PriceAdjustment{{Adjustment: "15%"}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "policy.priceAdjustments[0].adjustment") {
		t.Errorf("policy validation: got %v", err)
	}
}
