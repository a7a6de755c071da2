package types

// OfferingsOrDefault is t's offerings, or, for a catalog entry that lists
// none, what such an entry means: on demand at HourlyPrice in each of its
// Zones (or one offering without a zone when it names none). Callers never
// special-case an empty list.
func (t InstanceType) OfferingsOrDefault() []Offering {
	if len(t.Offerings) > 0 {
		return t.Offerings
	}
	if len(t.Zones) == 0 {
		return []Offering{{CapacityType: CapacityOnDemand, HourlyPrice: t.HourlyPrice, Available: true}}
	}
	out := make([]Offering, len(t.Zones))
	for i, z := range t.Zones {
		out[i] = Offering{Zone: z, CapacityType: CapacityOnDemand, HourlyPrice: t.HourlyPrice, Available: true}
	}
	return out
}

// HasSpot reports whether any offering of t is spot.
func (t InstanceType) HasSpot() bool {
	for _, o := range t.Offerings {
		if o.CapacityType == CapacitySpot {
			return true
		}
	}
	return false
}
