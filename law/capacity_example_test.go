package law_test

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// How the control law uses the windows: the bounds replace the policy's
// floor and ceiling for this decision, and the pool wakes at the next
// change. Always evaluate against the policy as written, not one whose
// bounds were already replaced.
func ExampleEffectiveBounds() {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 2, 20
	p.ProvisioningDelay = types.Duration(10 * time.Minute)
	p.CapacityWindows = []types.CapacityWindow{
		{Name: "office", Schedule: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: types.Duration(11 * time.Hour), MinNodes: 10},
	}
	for _, at := range []string{"2026-03-23T06:00:00Z", "2026-03-23T06:50:00Z", "2026-03-23T07:00:00Z", "2026-03-23T18:00:00Z"} {
		now, _ := time.Parse(time.RFC3339, at)
		b := law.EffectiveBounds(p, now)
		fmt.Printf("%s floor %d prescaling %v, next change %s\n", at, b.MinNodes, b.Prescaling, law.NextChange(p, now).UTC().Format(time.RFC3339))
	}
	// Output:
	// 2026-03-23T06:00:00Z floor 2 prescaling false, next change 2026-03-23T06:50:00Z
	// 2026-03-23T06:50:00Z floor 10 prescaling true, next change 2026-03-23T07:00:00Z
	// 2026-03-23T07:00:00Z floor 10 prescaling false, next change 2026-03-23T18:00:00Z
	// 2026-03-23T18:00:00Z floor 2 prescaling false, next change 2026-03-24T06:50:00Z
}
