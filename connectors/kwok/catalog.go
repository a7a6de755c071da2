package kwok

import (
	"slices"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Zones every default size is offered in; the reconciler puts each new
// machine in the zone its group has fewest machines in, as a cloud's
// zone-balanced group does.
var Zones = []string{"kwok-a", "kwok-b", "kwok-c"}

// overhead is flat, as the sim's is, so scenarios are easy to work out by
// hand: every node gives pods its size less 200m CPU, 512 MiB and a pod slot.
var overhead = types.Resources{MilliCPU: 200, Memory: 512 * types.MiB, Pods: 1}

// Catalog is the default catalog: amd64 sizes doubling in CPU and memory, an
// arm64 size (so a nodeSelector on kubernetes.io/arch picks some sizes), and
// two GPU sizes with NVIDIA's product label. Root disks differ so ephemeral
// storage requests choose between sizes. Prices are made up.
func Catalog() []types.InstanceType {
	size := func(name, arch string, vCPU, memGiB, gpus int64, gpuModel string, diskGiB int64, hourly float64) types.InstanceType {
		return sizing.WithRootDisk(types.InstanceType{
			Name: name, Family: "kwok", MilliCPU: vCPU * 1000, Memory: memGiB * types.GiB,
			GPUs: gpus, GPUModel: gpuModel, MaxPods: 110, Arch: arch, Zones: slices.Clone(Zones),
			HourlyPrice: hourly, PriceDate: priceDate, Overhead: overhead,
		}, diskGiB*types.GiB)
	}
	return []types.InstanceType{
		size("kwok-2c4g", "", 2, 4, 0, "", 20, 0.02),
		size("kwok-4c8g", "", 4, 8, 0, "", 50, 0.04),
		size("kwok-8c32g", "", 8, 32, 0, "", 200, 0.10),
		size("kwok-arm-4c8g", "arm64", 4, 8, 0, "", 50, 0.05),
		size("kwok-gpu-8c32g-1xa10", "", 8, 32, 1, "A10", 200, 0.60),
		size("kwok-gpu-32c128g-4xa100", "", 32, 128, 4, "A100", 400, 3.00),
	}
}

// priceDate dates the made-up prices as the cloud catalogs date theirs.
const priceDate = "2026-12"
