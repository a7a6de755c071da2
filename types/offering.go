package types

import (
	"fmt"
)

// CapacityType is how a machine is bought, spelled as Karpenter's
// karpenter.sh/capacity-type label spells it.
type CapacityType string

const (
	// CapacityOnDemand is bought at the list price and kept until released.
	CapacityOnDemand CapacityType = "on-demand"
	// CapacitySpot is spare capacity at a lower price that the provider may
	// take back with a short notice (AWS: two minutes).
	CapacitySpot CapacityType = "spot"
)

// CapacityTypeLabel is the node label that names a node's capacity type.
const CapacityTypeLabel = "karpenter.sh/capacity-type"

// ParseCapacityType checks a capacity type; empty means on-demand.
func ParseCapacityType(s string) (CapacityType, error) {
	switch CapacityType(s) {
	case "", CapacityOnDemand:
		return CapacityOnDemand, nil
	case CapacitySpot:
		return CapacitySpot, nil
	}
	return "", fmt.Errorf("capacity type %q: use %q or %q", s, CapacityOnDemand, CapacitySpot)
}

// Or is t, or on-demand when t is empty: what a node group bought before
// offerings existed was bought on demand.
func (t CapacityType) Or() CapacityType {
	if t == "" {
		return CapacityOnDemand
	}
	return t
}

// Offering is one way to buy an instance type: in a zone, on demand or as
// spot, at a price. A catalog entry with no offerings is sold on demand
// at its HourlyPrice wherever the provider places it.
type Offering struct {
	// Zone is empty when the provider places nodes by region only.
	Zone         string       `json:"zone,omitempty"`
	CapacityType CapacityType `json:"capacityType"`
	// HourlyPrice is in US dollars, taken on the catalog's PriceDate.
	HourlyPrice float64 `json:"hourlyPrice"`
	// Available is false when the catalog knows the offering is sold out;
	// a pool also marks an offering unavailable for a while after a buy
	// failed for insufficient capacity.
	Available bool `json:"available"`
}

// Key names the offering of a size: "m6i.large/us-east-1a/spot".
func (o Offering) Key(size string) string {
	return size + "/" + o.Zone + "/" + string(o.CapacityType.Or())
}

// MachineKey is how a pool counts a group's machines for pricing: by size
// for a group bought on demand anywhere (so a pool that never buys by
// offering keeps one price per size in its state), by offering
// ("m6i.large/us-east-1a/spot") otherwise.
func MachineKey(size string, ct CapacityType, zone string) string {
	if ct.Or() == CapacityOnDemand && zone == "" {
		return size
	}
	return Offering{Zone: zone, CapacityType: ct}.Key(size)
}
