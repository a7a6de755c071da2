package metering

import (
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// Dimensions naming how a node-hour was bought.
const (
	// DimCapacityType is "spot" (or "on-demand" for a zone-pinned group)
	// on a node-hours event; absent, the node-hours were bought on demand.
	DimCapacityType = "capacity_type"
	// DimZone is the zone a zone-pinned group's node ran in.
	DimZone = "zone"
)

// offeringSep joins a size to its capacity type and zone in a meter size;
// it is neither '/' (idempotency keys split on it) nor valid in a size.
const offeringSep = "@"

// OfferingSize is the size the meter counts a machine under: the plain
// size for on demand anywhere (so an on-demand pool's events and keys are
// those it has always sent),
// else "m6i.large@spot@us-east-1a", so spot and on-demand hours of one size
// have their own events and idempotency keys.
func OfferingSize(size string, ct types.CapacityType, zone string) string {
	if ct.Or() == types.CapacityOnDemand && zone == "" {
		return size
	}
	s := size + offeringSep + string(ct.Or())
	if zone != "" {
		s += offeringSep + zone
	}
	return s
}

// splitOfferingSize undoes OfferingSize.
func splitOfferingSize(s string) (size string, ct types.CapacityType, zone string) {
	parts := strings.SplitN(s, offeringSep, 3)
	size, ct = parts[0], types.CapacityOnDemand
	if len(parts) > 1 {
		ct = types.CapacityType(parts[1])
	}
	if len(parts) > 2 {
		zone = parts[2]
	}
	return size, ct, zone
}
