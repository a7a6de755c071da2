package sizing

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// OfferingRules say which of a size's offerings a plan may buy.
type OfferingRules struct {
	// CapacityTypes in order of preference; empty is [on-demand].
	CapacityTypes []types.CapacityType
	// Zones allowed; empty is every zone.
	Zones []string
	// Unavailable are offerings (types.Offering.Key) a buy failed for lack
	// of capacity, with until when. A key without a zone
	// ("m6i.large//spot") covers every zone: the provider chose the zone
	// and had none.
	Unavailable map[string]time.Time
	// NoSpot, when set, says why no spot may be bought now (the pool's
	// spot share is reached).
	NoSpot string
}

// Default reports whether the rules are what every pool had before
// offerings: on demand anywhere, nothing marked sold out.
func (r OfferingRules) Default() bool {
	ct := r.CapacityTypes
	return (len(ct) == 0 || (len(ct) == 1 && ct[0] == types.CapacityOnDemand)) && len(r.Zones) == 0 && len(r.Unavailable) == 0
}

func (r OfferingRules) types() []types.CapacityType {
	if len(r.CapacityTypes) == 0 {
		return []types.CapacityType{types.CapacityOnDemand}
	}
	return r.CapacityTypes
}

// soldOut reports whether size's offering o is marked unavailable, and until when.
func (r OfferingRules) soldOut(size string, o types.Offering) (time.Time, bool) {
	if until, ok := r.Unavailable[o.Key(size)]; ok {
		return until, true
	}
	any := types.Offering{CapacityType: o.CapacityType}
	until, ok := r.Unavailable[any.Key(size)]
	return until, ok
}

// Offered is one size's choice: the offerings of the capacity type it is
// bought as, cheapest first. A single one without a zone lets the
// provider place the machines (every zone costs the same and the pool
// names none).
type Offered struct {
	Candidates []types.Offering
	// Notes say what was passed over and why ("spot sold out in
	// us-east-1b until 14:05"), for the decision's reason.
	Notes []string
}

// PriceByOffering prices each size by the offering the pool would buy it
// as: the first capacity type in the rules' order with an allowed,
// available offering, and within it the cheapest (then by zone). A size
// bought zone by zone gets those zones as its Zones, so its node templates
// carry the zone label. Sizes with no usable offering are returned in
// excluded with why. With Default rules and a catalog without zone-priced
// offerings the catalog comes back as it was.
func PriceByOffering(catalog []types.InstanceType, r OfferingRules) (priced []types.InstanceType, offered map[string]Offered, excluded map[string]string) {
	priced = make([]types.InstanceType, 0, len(catalog))
	offered = make(map[string]Offered, len(catalog))
	excluded = map[string]string{}
	for _, t := range catalog {
		o, why := offeringsOf(t, r)
		if len(o.Candidates) == 0 {
			excluded[t.Name] = why
			priced = append(priced, t)
			continue
		}
		offered[t.Name] = o
		t.HourlyPrice = o.Candidates[0].HourlyPrice
		if o.Candidates[0].Zone != "" {
			t.Zones = make([]string, len(o.Candidates))
			for i, c := range o.Candidates {
				t.Zones[i] = c.Zone
			}
		}
		priced = append(priced, t)
	}
	return priced, offered, excluded
}

// offeringsOf is t's Offered under r, or why it has none.
func offeringsOf(t types.InstanceType, r OfferingRules) (Offered, string) {
	var out Offered
	var why []string
	for _, ct := range r.types() {
		if ct == types.CapacitySpot && r.NoSpot != "" {
			why = append(why, "no spot: "+r.NoSpot)
			continue
		}
		var usable []types.Offering
		var soldOut []string
		offeredType := false
		everyZone, allMarked := r.Unavailable[types.Offering{CapacityType: ct}.Key(t.Name)]
		for _, o := range t.OfferingsOrDefault() {
			o.CapacityType = o.CapacityType.Or()
			if o.CapacityType != ct {
				continue
			}
			offeredType = true
			switch until, marked := r.soldOut(t.Name, o); {
			case len(r.Zones) > 0 && !slices.Contains(r.Zones, o.Zone):
			case !o.Available:
				soldOut = append(soldOut, zoneName(o.Zone)+" (catalog)")
			case marked && allMarked:
				if len(soldOut) == 0 || soldOut[0] != "every zone" {
					soldOut = append([]string{"every zone"}, soldOut...)
				}
			case marked:
				soldOut = append(soldOut, zoneName(o.Zone)+" until "+until.UTC().Format("15:04"))
			default:
				usable = append(usable, o)
			}
		}
		if len(soldOut) > 0 {
			if soldOut[0] == "every zone" {
				soldOut[0] += " until " + everyZone.UTC().Format("15:04")
			}
			why = append(why, fmt.Sprintf("%s %s sold out in %s", ct, t.Name, strings.Join(soldOut, ", ")))
		}
		if len(usable) == 0 {
			if !offeredType {
				why = append(why, fmt.Sprintf("%s has no %s offering", t.Name, ct))
			} else if len(soldOut) == 0 {
				why = append(why, fmt.Sprintf("%s has no %s offering in zones %s", t.Name, ct, strings.Join(r.Zones, ", ")))
			}
			continue
		}
		slices.SortFunc(usable, func(a, b types.Offering) int {
			return cmp.Or(cmp.Compare(a.HourlyPrice, b.HourlyPrice), strings.Compare(a.Zone, b.Zone))
		})
		if len(r.Zones) == 0 && usable[0].HourlyPrice == usable[len(usable)-1].HourlyPrice && len(soldOut) == 0 {
			// Every zone costs the same: the provider places the machines
			// (and spreads them) as it did before offerings.
			usable = []types.Offering{{CapacityType: ct, HourlyPrice: usable[0].HourlyPrice, Available: true}}
		}
		out.Candidates, out.Notes = usable, why
		return out, ""
	}
	return out, strings.Join(why, "; ")
}

func zoneName(z string) string {
	if z == "" {
		return "every zone"
	}
	return z
}

// DescribeOffering says which offering a plan buys and why, for the
// decision's reason: "spot m6i.large in us-east-1a at $0.0350/h
// (cheapest allowed offering); on-demand fallback: spot m6i.large sold
// out in us-east-1b until 14:05".
func DescribeOffering(size string, o types.Offering, notes []string) string {
	where := ""
	if o.Zone != "" {
		where = " in " + o.Zone
	}
	s := fmt.Sprintf("%s %s%s at $%.4f/h", o.CapacityType.Or(), size, where, o.HourlyPrice)
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// WithZone is catalog with size bought in one zone at price: a plan for
// the offering of that zone alone.
func WithZone(catalog []types.InstanceType, size string, o types.Offering) []types.InstanceType {
	out := slices.Clone(catalog)
	for i := range out {
		if out[i].Name == size {
			out[i].HourlyPrice = o.HourlyPrice
			out[i].Zones = nil
			if o.Zone != "" {
				out[i].Zones = []string{o.Zone}
			}
		}
	}
	return out
}
