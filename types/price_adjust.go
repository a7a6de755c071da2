package types

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PriceAdjustment changes what nodes of some sizes cost the pool, for
// commitments the catalog's list prices do not know (reserved instances,
// savings plans, negotiated discounts), as Karpenter's NodeOverlay price
// and priceAdjustment do. The planner buys by the adjusted prices, the
// pool's hourly cost and so the cost budgets count them, and the status
// publishes them. It applies to on-demand prices: spot follows the market.
type PriceAdjustment struct {
	// Org limits an entry of the spec file's priceAdjustments section to
	// one org's pools (empty: every org's). A pool's own entries have none.
	Org string `json:"org,omitempty"`
	// Sizes or Families say which sizes it adjusts (a size's family as its
	// catalog names it: m5, n2, ...); neither: every size.
	Sizes    []string `json:"sizes,omitempty"`
	Families []string `json:"families,omitempty"`
	// Price is the hourly price in US dollars that replaces the list
	// price, or Adjustment changes it: "-15%", "+10%", "-0.05" (dollars
	// per hour). Exactly one.
	Price      *float64 `json:"price,omitempty"`
	Adjustment string   `json:"adjustment,omitempty"`
}

// Bounds on price adjustments.
const (
	maxPriceAdjustments = 400
	maxAdjustedNames    = 500
)

// Specificity orders adjustments for one size: one naming the size wins
// over one naming its family, which wins over one naming neither.
func (a PriceAdjustment) Specificity() int {
	switch {
	case len(a.Sizes) > 0:
		return 2
	case len(a.Families) > 0:
		return 1
	}
	return 0
}

// Matches reports whether the adjustment applies to size of family.
func (a PriceAdjustment) Matches(size, family string) bool {
	switch {
	case len(a.Sizes) > 0:
		return contains(a.Sizes, size)
	case len(a.Families) > 0:
		return family != "" && contains(a.Families, family)
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Apply is list price adjusted, never below zero.
func (a PriceAdjustment) Apply(list float64) float64 {
	if a.Price != nil {
		return *a.Price
	}
	pct, abs, _ := parseAdjustment(a.Adjustment)
	return math.Max(0, list*(1+pct/100)+abs)
}

// parseAdjustment reads "-15%" (percent) or "+0.05" (dollars per hour).
func parseAdjustment(s string) (pct, abs float64, err error) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '+' && t[0] != '-') {
		return 0, 0, fmt.Errorf("%q: write a signed percent (-15%%) or a signed dollar amount per hour (-0.05)", s)
	}
	if num, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("%q: not a percent", s)
		}
		if v < -100 || v > 1000 {
			return 0, 0, fmt.Errorf("%q: a percent within [-100%%, +1000%%]", s)
		}
		return v, 0, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, 0, fmt.Errorf("%q: not a dollar amount", s)
	}
	if math.Abs(v) > MaxHourlyCost {
		return 0, 0, fmt.Errorf("%q: at most %g dollars per hour either way", s, MaxHourlyCost)
	}
	return 0, v, nil
}

// ValidatePriceAdjustments checks each entry, naming field[i] and the
// part that is wrong. orgAllowed says whether entries may name an org
// (the spec file's section may, a pool's own may not).
func ValidatePriceAdjustments(field string, adj []PriceAdjustment, orgAllowed bool) error {
	var errs []error
	if len(adj) > maxPriceAdjustments {
		errs = append(errs, fmt.Errorf("%s: has %d entries, at most %d", field, len(adj), maxPriceAdjustments))
	}
	for i, a := range adj {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case a.Price != nil && a.Adjustment != "":
			errs = append(errs, fmt.Errorf("%s: give price or adjustment, not both", at))
		case a.Price == nil && a.Adjustment == "":
			errs = append(errs, fmt.Errorf("%s: give price (dollars per hour) or adjustment (-15%% or -0.05)", at))
		case a.Price != nil && (math.IsNaN(*a.Price) || *a.Price < 0 || *a.Price > MaxHourlyCost):
			errs = append(errs, fmt.Errorf("%s.price: must be within [0, %g] dollars per hour, got %v", at, MaxHourlyCost, *a.Price))
		case a.Adjustment != "":
			if _, _, err := parseAdjustment(a.Adjustment); err != nil {
				errs = append(errs, fmt.Errorf("%s.adjustment: %w", at, err))
			}
		}
		if len(a.Sizes) > 0 && len(a.Families) > 0 {
			errs = append(errs, fmt.Errorf("%s: give sizes or families, not both", at))
		}
		if len(a.Sizes)+len(a.Families) > maxAdjustedNames {
			errs = append(errs, fmt.Errorf("%s: names %d sizes and families, at most %d", at, len(a.Sizes)+len(a.Families), maxAdjustedNames))
		}
		for j, s := range a.Sizes {
			if s == "" || len(s) > 253 {
				errs = append(errs, fmt.Errorf("%s.sizes[%d]: must be a size name of 1 to 253 characters", at, j))
			}
		}
		for j, s := range a.Families {
			if s == "" || len(s) > 253 {
				errs = append(errs, fmt.Errorf("%s.families[%d]: must be a family name of 1 to 253 characters", at, j))
			}
		}
		switch {
		case a.Org != "" && !orgAllowed:
			errs = append(errs, fmt.Errorf("%s.org: a pool's own adjustments are its org's already; name orgs in the spec file's priceAdjustments section", at))
		case a.Org != "":
			if err := ValidateDNSLabel("org", a.Org); err != nil {
				errs = append(errs, fmt.Errorf("%s.%w", at, err))
			}
		}
	}
	return errors.Join(errs...)
}

// AdjustedPrice is size's price after adjs: the most specific entry that
// matches wins, the first listed among equally specific ones; ok is false
// when none matches.
func AdjustedPrice(adjs []PriceAdjustment, size, family string, list float64) (price float64, ok bool) {
	best := -1
	for i, a := range adjs {
		if a.Matches(size, family) && (best < 0 || a.Specificity() > adjs[best].Specificity()) {
			best = i
		}
	}
	if best < 0 {
		return list, false
	}
	return adjs[best].Apply(list), true
}
