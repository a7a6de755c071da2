package catalogs

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

const simRootDisk = 100 * types.GiB

// simOverhead is flat so that simulated scenarios are easy to work out by
// hand: every sim node gives pods its size less 200m CPU, 512 MiB and one
// pod slot.
var simOverhead = types.Resources{MilliCPU: 200, Memory: 512 * types.MiB, Pods: 1}

// Sim is the sim's small catalog, used when its Config.Catalog is
// empty: cheap, so demos and scenario tests show costs without looking like
// a cloud bill, and sizes doubling in CPU and memory so bin-packing has a
// real choice. It is the one sim catalog: `visor dev`, the sim kind of a
// clusters file, chaos, score and the tests all use it.
func Sim() []types.InstanceType {
	size := func(name, family string, vCPU, memGiB, gpus int64, gpuModel string, hourly float64) types.InstanceType {
		// Every simulated node has a 100 GiB root disk.
		return sizing.WithRootDisk(types.InstanceType{
			Name: name, Family: family, MilliCPU: vCPU * 1000, Memory: memGiB * types.GiB,
			GPUs: gpus, GPUModel: gpuModel, MaxPods: 110,
			HourlyPrice: hourly, PriceDate: priceDate, Overhead: simOverhead,
		}, simRootDisk)
	}
	return []types.InstanceType{
		size("sim-2c4g", "sim", 2, 4, 0, "", 0.02),
		size("sim-4c8g", "sim", 4, 8, 0, "", 0.04),
		size("sim-8c16g", "sim", 8, 16, 0, "", 0.08),
		size("sim-16c64g", "sim", 16, 64, 0, "", 0.20),
		size("sim-gpu-8c32g-1xa10", "sim-gpu", 8, 32, 1, "A10", 0.60),
	}
}
