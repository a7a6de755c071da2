package sizing

import "github.com/hanzoai/visor-fleet/types"

// simOverhead is flat so that simulated scenarios are easy to work out by
// hand: every sim node gives pods its size less 200m CPU, 512 MiB and one
// pod slot.
var simOverhead = types.Resources{MilliCPU: 200, Memory: 512 * types.MiB, Pods: 1}

// SimCatalog is the simulated provider's small catalog, cheap so that demos
// and scenario tests show costs without looking like a cloud bill.
func SimCatalog() []types.InstanceType {
	const gib = 1024
	rows := []row{
		{"sim-2c4g", "sim", 2, 4 * gib, 0, "", 110, 0.02},
		{"sim-4c8g", "sim", 4, 8 * gib, 0, "", 110, 0.04},
		{"sim-8c16g", "sim", 8, 16 * gib, 0, "", 110, 0.08},
		{"sim-16c64g", "sim", 16, 64 * gib, 0, "", 110, 0.20},
		{"sim-gpu-8c32g-1xa10", "sim-gpu", 8, 32 * gib, 1, "A10", 110, 0.60},
	}
	return withRootDisks(buildCatalog(rows, func(_, _, _ int64) types.Resources { return simOverhead }), simRootDisk)
}
