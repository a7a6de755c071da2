package catalogs

import (
	"fmt"
	"math"
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// SimZones are the zones of SimSpot's offerings.
var SimZones = []string{"sim-a", "sim-b", "sim-c"}

// SimSpotFraction is what spot costs in SimSpot, as a share of on-demand:
// about what EC2's general purpose types go for.
const SimSpotFraction = 0.3

// SimSpot is the sim catalog sold in SimZones on demand and as spot at
// SimSpotFraction of the on-demand price.
func SimSpot() []types.InstanceType {
	c, err := WithOfferings(Sim(), SimZones, SimSpotFraction)
	if err != nil {
		panic(err)
	}
	return c
}

// WithOfferings gives every size an on-demand offering at its price in
// each zone and spot at spotFractions[i] of it in zones[i] (0: no spot
// there; fewer fractions than zones: the last repeats; none: on demand
// only). The sizes' Zones become zones.
func WithOfferings(catalog []types.InstanceType, zones []string, spotFractions ...float64) ([]types.InstanceType, error) {
	if len(zones) == 0 {
		return nil, fmt.Errorf("offerings need at least one zone")
	}
	for i, z := range zones {
		if z == "" || slices.Contains(zones[:i], z) {
			return nil, fmt.Errorf("zones[%d]: %q is empty or listed twice", i, z)
		}
	}
	for i, f := range spotFractions {
		if math.IsNaN(f) || f < 0 || f > 1 {
			return nil, fmt.Errorf("spotFractions[%d]: %v is not within [0, 1]", i, f)
		}
	}
	out := slices.Clone(catalog)
	for i := range out {
		t := &out[i]
		t.Zones = slices.Clone(zones)
		t.Offerings = make([]types.Offering, 0, 2*len(zones))
		for _, z := range zones {
			t.Offerings = append(t.Offerings, types.Offering{Zone: z, CapacityType: types.CapacityOnDemand, HourlyPrice: t.HourlyPrice, Available: true})
		}
		for j, z := range zones {
			if len(spotFractions) == 0 {
				break
			}
			f := spotFractions[min(j, len(spotFractions)-1)]
			if f > 0 {
				// Rounded to a hundredth of a cent, as a price list would be.
				p := math.Round(t.HourlyPrice*f*10000) / 10000
				t.Offerings = append(t.Offerings, types.Offering{Zone: z, CapacityType: types.CapacitySpot, HourlyPrice: p, Available: true})
			}
		}
	}
	return out, nil
}
