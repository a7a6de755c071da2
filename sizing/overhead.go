package sizing

import "github.com/hanzoai/visor-fleet/types"

// EvictionHard is the kubelet's default memory.available eviction
// threshold: pods can never use it.
const EvictionHard = 100 * types.MiB

// KubeReservedCPU is the tiered CPU reservation GKE and EKS AMIs apply:
// 6% of the first core, 1% of the second, 0.5% of the next two and 0.25%
// of every core above four. Small nodes lose proportionally more, which is
// exactly what the HIP's sum-and-divide rule ignores.
func KubeReservedCPU(milliCPU int64) int64 {
	return tiered(milliCPU, 10000, []tier{{1000, 600}, {2000, 100}, {4000, 50}, {1 << 62, 25}})
}

// KubeReservedMemory is GKE's tiered memory reservation: 25% of the first
// 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112 and 2%
// of everything above 128 GiB.
func KubeReservedMemory(bytes int64) int64 {
	return tiered(bytes, 100, []tier{
		{4 * types.GiB, 25}, {8 * types.GiB, 20}, {16 * types.GiB, 10},
		{128 * types.GiB, 6}, {1 << 62, 2},
	})
}

// tier reserves rate/denominator of the amount between the previous tier's
// upTo and its own.
type tier struct{ upTo, rate int64 }

// tiered sums each tier's share of amount, rounding down per tier.
func tiered(amount, denominator int64, tiers []tier) int64 {
	var reserved, prev int64
	for _, t := range tiers {
		if amount <= prev {
			break
		}
		reserved += (min(amount, t.upTo) - prev) * t.rate / denominator
		prev = t.upTo
	}
	return reserved
}

// DaemonAllowance is what a provider's per-node DaemonSets (CNI, CSI node
// plugin, agents) request on every node, and how many pod slots they take.
type DaemonAllowance struct {
	MilliCPU int64
	Memory   int64
	Pods     int64
}

// StandardOverhead is the per-node reservation for a node of this capacity:
// kubelet/system reservation, eviction threshold and the provider's daemons.
func StandardOverhead(milliCPU, memory int64, d DaemonAllowance) types.Resources {
	return types.Resources{
		MilliCPU: KubeReservedCPU(milliCPU) + d.MilliCPU,
		Memory:   KubeReservedMemory(memory) + EvictionHard + d.Memory,
		Pods:     d.Pods,
	}
}
