package aws

import "github.com/hanzoai/visor-fleet/types"

// defaultCatalog is a small on-demand Linux list (us-east-1, taken
// 2024-06) so a provider works before the sizing package supplies a full
// catalog. MaxPods is the VPC CNI limit for each type.
func defaultCatalog() []types.InstanceType {
	const date = "2024-06"
	return []types.InstanceType{
		eksSize("c6i.large", "c6i", 2, 4, 0, "", 29, 0.085, date),
		eksSize("m6i.large", "m6i", 2, 8, 0, "", 29, 0.096, date),
		eksSize("r6i.large", "r6i", 2, 16, 0, "", 29, 0.126, date),
		eksSize("m6i.xlarge", "m6i", 4, 16, 0, "", 58, 0.192, date),
		eksSize("m6i.2xlarge", "m6i", 8, 32, 0, "", 58, 0.384, date),
		eksSize("g5.xlarge", "g5", 4, 16, 1, "nvidia-a10g", 58, 1.006, date),
	}
}

// eksSize fills Overhead with the EKS AMI's kube-reserved formula (CPU: 6%
// of the first core, 1% of the second, 0.5% of cores 3-4, 0.25% above;
// memory: 255Mi + 11Mi per pod) plus the 100Mi hard eviction threshold.
func eksSize(name, family string, vcpus, memGiB, gpus int64, gpuModel string, maxPods int64, price float64, date string) types.InstanceType {
	milli := vcpus * 1000
	reservedCPU := int64(60)
	if vcpus >= 2 {
		reservedCPU += 10
	}
	if vcpus >= 3 {
		reservedCPU += 5 * min(vcpus-2, 2)
	}
	if vcpus > 4 {
		reservedCPU += (vcpus - 4) * 25 / 10
	}
	reservedMem := 255*types.MiB + 11*types.MiB*maxPods + 100*types.MiB
	return types.InstanceType{
		Name: name, Family: family, MilliCPU: milli, Memory: memGiB * types.GiB,
		GPUs: gpus, GPUModel: gpuModel, MaxPods: maxPods,
		HourlyPrice: price, PriceDate: date,
		Overhead: types.Resources{MilliCPU: reservedCPU, Memory: reservedMem},
	}
}
