package digitalocean

import "github.com/hanzoai/visor-fleet/types"

// priceDate is when the list prices below were taken.
const priceDate = "2025-06"

// DefaultCatalog is a short list of common DOKS sizes at DigitalOcean's
// hourly list prices (monthly price / 672 h). Overheads approximate the
// tiered kubelet reservation plus the eviction threshold; the sizing
// package owns the full, authoritative catalogs.
func DefaultCatalog() []types.InstanceType {
	size := func(name, family string, cpus, memGiB int64, hourly float64, overCPU, overMemMiB int64) types.InstanceType {
		return types.InstanceType{
			Name: name, Family: family,
			MilliCPU: cpus * 1000, Memory: memGiB * types.GiB, MaxPods: 110,
			HourlyPrice: hourly, PriceDate: priceDate,
			Overhead: types.Resources{MilliCPU: overCPU, Memory: overMemMiB * types.MiB},
		}
	}
	return []types.InstanceType{
		size("s-2vcpu-4gb", "basic", 2, 4, 0.03571, 70, 1124),
		size("s-4vcpu-8gb", "basic", 4, 8, 0.07143, 80, 1943),
		size("s-8vcpu-16gb", "basic", 8, 16, 0.14286, 90, 2762),
		size("c-4", "cpu-optimized", 4, 8, 0.12500, 80, 1943),
		size("g-4vcpu-16gb", "general-purpose", 4, 16, 0.18750, 80, 2762),
	}
}
