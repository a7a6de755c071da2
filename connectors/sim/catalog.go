package sim

import "github.com/hanzoai/visor-fleet/types"

// DefaultCatalog is the sim's small catalog, used when Config.Catalog is
// empty. Sizes double in CPU and memory so bin-packing has a real choice;
// the overhead mimics kubelet and system reservations growing with size.
func DefaultCatalog() []types.InstanceType {
	size := func(name string, milliCPU, memGiB, maxPods int64, price float64, overhead types.Resources) types.InstanceType {
		return types.InstanceType{
			Name: name, Family: "sim", MilliCPU: milliCPU, Memory: memGiB * types.GiB,
			MaxPods: maxPods, HourlyPrice: price, PriceDate: "simulated", Overhead: overhead,
		}
	}
	gpu := size("sim-gpu", 8000, 32, 110, 0.90, types.Resources{MilliCPU: 300, Memory: 1536 * types.MiB})
	gpu.Family, gpu.GPUs, gpu.GPUModel = "sim-gpu", 1, "sim-t4"
	return []types.InstanceType{
		size("sim-small", 2000, 4, 30, 0.05, types.Resources{MilliCPU: 200, Memory: 640 * types.MiB}),
		size("sim-medium", 4000, 8, 60, 0.10, types.Resources{MilliCPU: 250, Memory: 1024 * types.MiB}),
		size("sim-large", 8000, 16, 110, 0.20, types.Resources{MilliCPU: 300, Memory: 1536 * types.MiB}),
		size("sim-xlarge", 16000, 32, 110, 0.40, types.Resources{MilliCPU: 400, Memory: 2048 * types.MiB}),
		gpu,
	}
}
