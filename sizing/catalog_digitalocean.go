package sizing

import "github.com/hanzoai/visor-fleet/types"

// DigitalOcean bills droplets hourly up to a monthly cap of 672 hours, and
// lists most sizes by their monthly price.
func doMonthly(dollars float64) float64 { return dollars / 672 }

// doksDaemons: cilium, csi-do-node, do-node-agent and konnectivity-agent run
// on every DOKS node.
var doksDaemons = daemonAllowance{milliCPU: 250, memory: 400 * types.MiB, pods: 4}

// doksMaxPods is DOKS's fixed pods-per-node limit.
const doksMaxPods = 110

// DigitalOceanCatalog lists droplet slugs usable as DOKS nodes: standard
// (s-*), general purpose (g-*), CPU-optimized (c-*), memory-optimized (m-*)
// and the GPU droplets, at list prices.
func DigitalOceanCatalog() []types.InstanceType {
	const gib = 1024
	rows := []row{
		{"s-1vcpu-2gb", "standard", 1, 2 * gib, 0, "", doksMaxPods, doMonthly(12)},
		{"s-2vcpu-2gb", "standard", 2, 2 * gib, 0, "", doksMaxPods, doMonthly(18)},
		{"s-2vcpu-4gb", "standard", 2, 4 * gib, 0, "", doksMaxPods, doMonthly(24)},
		{"s-4vcpu-8gb", "standard", 4, 8 * gib, 0, "", doksMaxPods, doMonthly(48)},
		{"s-6vcpu-16gb", "standard", 6, 16 * gib, 0, "", doksMaxPods, doMonthly(96)},
		{"s-8vcpu-16gb", "standard", 8, 16 * gib, 0, "", doksMaxPods, doMonthly(96)},
		{"s-8vcpu-32gb", "standard", 8, 32 * gib, 0, "", doksMaxPods, doMonthly(192)},
		{"s-12vcpu-48gb", "standard", 12, 48 * gib, 0, "", doksMaxPods, doMonthly(288)},
		{"s-16vcpu-64gb", "standard", 16, 64 * gib, 0, "", doksMaxPods, doMonthly(384)},
		{"s-20vcpu-96gb", "standard", 20, 96 * gib, 0, "", doksMaxPods, doMonthly(480)},
		{"s-24vcpu-128gb", "standard", 24, 128 * gib, 0, "", doksMaxPods, doMonthly(640)},
		{"s-32vcpu-192gb", "standard", 32, 192 * gib, 0, "", doksMaxPods, doMonthly(960)},

		{"g-2vcpu-8gb", "general-purpose", 2, 8 * gib, 0, "", doksMaxPods, doMonthly(63)},
		{"g-4vcpu-16gb", "general-purpose", 4, 16 * gib, 0, "", doksMaxPods, doMonthly(126)},
		{"g-8vcpu-32gb", "general-purpose", 8, 32 * gib, 0, "", doksMaxPods, doMonthly(252)},
		{"g-16vcpu-64gb", "general-purpose", 16, 64 * gib, 0, "", doksMaxPods, doMonthly(504)},
		{"g-32vcpu-128gb", "general-purpose", 32, 128 * gib, 0, "", doksMaxPods, doMonthly(1008)},
		{"g-40vcpu-160gb", "general-purpose", 40, 160 * gib, 0, "", doksMaxPods, doMonthly(1260)},

		{"c-2", "cpu-optimized", 2, 4 * gib, 0, "", doksMaxPods, doMonthly(42)},
		{"c-4", "cpu-optimized", 4, 8 * gib, 0, "", doksMaxPods, doMonthly(84)},
		{"c-8", "cpu-optimized", 8, 16 * gib, 0, "", doksMaxPods, doMonthly(168)},
		{"c-16", "cpu-optimized", 16, 32 * gib, 0, "", doksMaxPods, doMonthly(336)},
		{"c-32", "cpu-optimized", 32, 64 * gib, 0, "", doksMaxPods, doMonthly(672)},
		{"c-48", "cpu-optimized", 48, 96 * gib, 0, "", doksMaxPods, doMonthly(1008)},

		{"m-2vcpu-16gb", "memory-optimized", 2, 16 * gib, 0, "", doksMaxPods, doMonthly(84)},
		{"m-4vcpu-32gb", "memory-optimized", 4, 32 * gib, 0, "", doksMaxPods, doMonthly(168)},
		{"m-8vcpu-64gb", "memory-optimized", 8, 64 * gib, 0, "", doksMaxPods, doMonthly(336)},
		{"m-16vcpu-128gb", "memory-optimized", 16, 128 * gib, 0, "", doksMaxPods, doMonthly(672)},
		{"m-24vcpu-192gb", "memory-optimized", 24, 192 * gib, 0, "", doksMaxPods, doMonthly(1008)},
		{"m-32vcpu-256gb", "memory-optimized", 32, 256 * gib, 0, "", doksMaxPods, doMonthly(1344)},

		{"gpu-l40sx1-48gb", "gpu", 8, 64 * gib, 1, "L40S", doksMaxPods, 1.57},
		{"gpu-h100x1-80gb", "gpu", 20, 240 * gib, 1, "H100", doksMaxPods, 3.39},
		{"gpu-h100x8-640gb", "gpu", 160, 1920 * gib, 8, "H100", doksMaxPods, 23.92},
	}
	return withRootDisks(buildCatalog(rows, func(cpu, mem, _ int64) types.Resources {
		return standardOverhead(cpu, mem, doksDaemons)
	}), doRootDisk)
}
