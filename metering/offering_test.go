package metering

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Spot and on-demand hours of one size are separate events naming their
// capacity type (and zone); on demand keeps the key it had before.
func TestNodeHourEventsNameTheCapacityType(t *testing.T) {
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "aws", Cluster: "c1"}
	hour := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	spot := OfferingSize("m6i.large", types.CapacitySpot, "us-east-1b")
	if err := ValidateSize(spot); err != nil {
		t.Fatal(err)
	}
	events := NodeHourEvents(pool, map[string]float64{"m6i.large": 2, spot: 3}, hour)
	if len(events) != 2 {
		t.Fatalf("%d events", len(events))
	}
	od, sp := events[0], events[1]
	if od.Size != "m6i.large" || od.Dimensions[DimCapacityType] != "" || od.Idempotency != IdempotencyKey(pool, "m6i.large", hour) || od.Value != 2 {
		t.Errorf("on-demand: %+v", od)
	}
	if sp.Size != "m6i.large" || sp.Dimensions[DimCapacityType] != "spot" || sp.Dimensions[DimZone] != "us-east-1b" || sp.Idempotency == od.Idempotency || sp.Value != 3 {
		t.Errorf("spot: %+v", sp)
	}
}
