package types

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxPolicyZones bounds Policy.Zones.
const maxPolicyZones = 64

// Share is a fraction within [0, 1]. A spec writes it as a number (0.25)
// or a percentage string ("25%"); it is kept and encoded as the fraction.
type Share float64

// UnmarshalJSON takes 0.25, "0.25" or "25%".
func (s *Share) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*s = Share(f)
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("share %s: want a fraction (0.25) or a percentage (\"25%%\")", b)
	}
	v, pct := strings.CutSuffix(strings.TrimSpace(str), "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("share %q: want a fraction (0.25) or a percentage (\"25%%\")", str)
	}
	if pct {
		f /= 100
	}
	*s = Share(f)
	return nil
}

// EffectiveCapacityTypes is CapacityTypes, or [on-demand] when empty.
func (p Policy) EffectiveCapacityTypes() []CapacityType {
	if len(p.CapacityTypes) == 0 {
		return []CapacityType{CapacityOnDemand}
	}
	return p.CapacityTypes
}

// AllowsOffering reports whether the policy lets the pool buy o: its
// capacity type is listed (or on-demand when none is) and its zone is
// allowed. An offering without a zone is allowed only when the policy
// names no zones: the provider would place it anywhere.
func (p Policy) AllowsOffering(o Offering) bool {
	if !slices.Contains(p.EffectiveCapacityTypes(), o.CapacityType.Or()) {
		return false
	}
	return len(p.Zones) == 0 || slices.Contains(p.Zones, o.Zone)
}

// validateOfferings checks capacityTypes, zones and maxSpotShare.
func (p Policy) validateOfferings() []error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("policy.%s: %s", field, fmt.Sprintf(format, a...)))
	}
	seen := map[CapacityType]bool{}
	for i, c := range p.CapacityTypes {
		field := fmt.Sprintf("capacityTypes[%d]", i)
		switch {
		case c != CapacityOnDemand && c != CapacitySpot:
			bad(field, "unknown capacity type %q: use %q or %q", c, CapacitySpot, CapacityOnDemand)
		case seen[c]:
			bad(field, "%q is listed twice", c)
		}
		seen[c] = true
	}
	if len(p.Zones) > maxPolicyZones {
		bad("zones", "lists %d zones, at most %d", len(p.Zones), maxPolicyZones)
	}
	zones := map[string]bool{}
	for i, z := range p.Zones {
		field := fmt.Sprintf("zones[%d]", i)
		switch {
		case z == "" || len(z) > 63 || strings.ContainsAny(z, " /\t\n"):
			bad(field, "must be a zone name of 1 to 63 characters without spaces or slashes, got %q", z)
		case zones[z]:
			bad(field, "%q is listed twice", z)
		}
		zones[z] = true
	}
	s := float64(p.MaxSpotShare)
	switch {
	case math.IsNaN(s) || s < 0 || s > 1:
		bad("maxSpotShare", "must be a fraction within [0, 1] or a percentage within [0%%, 100%%] (0: no cap), got %v", s)
	case s > 0 && !seen[CapacitySpot]:
		bad("maxSpotShare", "is set but capacityTypes does not list %q", CapacitySpot)
	}
	return errs
}
