package catalogs

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// DigitalOcean bills droplets hourly up to a monthly cap of 672 hours, and
// lists most sizes by their monthly price.
func doMonthly(dollars float64) float64 { return dollars / 672 }

// doksDaemons: cilium, csi-do-node, do-node-agent and konnectivity-agent run
// on every DOKS node.
var doksDaemons = sizing.DaemonAllowance{MilliCPU: 250, Memory: 400 * types.MiB, Pods: 4}

// doksMaxPods is DOKS's fixed pods-per-node limit.
const doksMaxPods = 110

// DigitalOcean lists droplet slugs usable as DOKS nodes: standard
// (s-*), general purpose (g-*), CPU-optimized (c-*), memory-optimized (m-*)
// and the GPU droplets, at list prices.
func DigitalOcean() []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("s-1vcpu-2gb", "standard", 1, 2*gib, 0, "", doksMaxPods, doMonthly(12)),
		row("s-2vcpu-2gb", "standard", 2, 2*gib, 0, "", doksMaxPods, doMonthly(18)),
		row("s-2vcpu-4gb", "standard", 2, 4*gib, 0, "", doksMaxPods, doMonthly(24)),
		row("s-4vcpu-8gb", "standard", 4, 8*gib, 0, "", doksMaxPods, doMonthly(48)),
		row("s-6vcpu-16gb", "standard", 6, 16*gib, 0, "", doksMaxPods, doMonthly(96)),
		row("s-8vcpu-16gb", "standard", 8, 16*gib, 0, "", doksMaxPods, doMonthly(96)),
		row("s-8vcpu-32gb", "standard", 8, 32*gib, 0, "", doksMaxPods, doMonthly(192)),
		row("s-12vcpu-48gb", "standard", 12, 48*gib, 0, "", doksMaxPods, doMonthly(288)),
		row("s-16vcpu-64gb", "standard", 16, 64*gib, 0, "", doksMaxPods, doMonthly(384)),
		row("s-20vcpu-96gb", "standard", 20, 96*gib, 0, "", doksMaxPods, doMonthly(480)),
		row("s-24vcpu-128gb", "standard", 24, 128*gib, 0, "", doksMaxPods, doMonthly(640)),
		row("s-32vcpu-192gb", "standard", 32, 192*gib, 0, "", doksMaxPods, doMonthly(960)),

		row("g-2vcpu-8gb", "general-purpose", 2, 8*gib, 0, "", doksMaxPods, doMonthly(63)),
		row("g-4vcpu-16gb", "general-purpose", 4, 16*gib, 0, "", doksMaxPods, doMonthly(126)),
		row("g-8vcpu-32gb", "general-purpose", 8, 32*gib, 0, "", doksMaxPods, doMonthly(252)),
		row("g-16vcpu-64gb", "general-purpose", 16, 64*gib, 0, "", doksMaxPods, doMonthly(504)),
		row("g-32vcpu-128gb", "general-purpose", 32, 128*gib, 0, "", doksMaxPods, doMonthly(1008)),
		row("g-40vcpu-160gb", "general-purpose", 40, 160*gib, 0, "", doksMaxPods, doMonthly(1260)),

		row("c-2", "cpu-optimized", 2, 4*gib, 0, "", doksMaxPods, doMonthly(42)),
		row("c-4", "cpu-optimized", 4, 8*gib, 0, "", doksMaxPods, doMonthly(84)),
		row("c-8", "cpu-optimized", 8, 16*gib, 0, "", doksMaxPods, doMonthly(168)),
		row("c-16", "cpu-optimized", 16, 32*gib, 0, "", doksMaxPods, doMonthly(336)),
		row("c-32", "cpu-optimized", 32, 64*gib, 0, "", doksMaxPods, doMonthly(672)),
		row("c-48", "cpu-optimized", 48, 96*gib, 0, "", doksMaxPods, doMonthly(1008)),

		row("m-2vcpu-16gb", "memory-optimized", 2, 16*gib, 0, "", doksMaxPods, doMonthly(84)),
		row("m-4vcpu-32gb", "memory-optimized", 4, 32*gib, 0, "", doksMaxPods, doMonthly(168)),
		row("m-8vcpu-64gb", "memory-optimized", 8, 64*gib, 0, "", doksMaxPods, doMonthly(336)),
		row("m-16vcpu-128gb", "memory-optimized", 16, 128*gib, 0, "", doksMaxPods, doMonthly(672)),
		row("m-24vcpu-192gb", "memory-optimized", 24, 192*gib, 0, "", doksMaxPods, doMonthly(1008)),
		row("m-32vcpu-256gb", "memory-optimized", 32, 256*gib, 0, "", doksMaxPods, doMonthly(1344)),

		row("gpu-l40sx1-48gb", "gpu", 8, 64*gib, 1, "L40S", doksMaxPods, 1.57),
		row("gpu-h100x1-80gb", "gpu", 20, 240*gib, 1, "H100", doksMaxPods, 3.39),
		row("gpu-h100x8-640gb", "gpu", 160, 1920*gib, 8, "H100", doksMaxPods, 23.92),
	}
	return sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, doksDaemons)
	}), doRootDisk)
}

// doRootDisks are the droplets' local SSDs as DigitalOcean lists them per
// slug (GPU droplets: their boot disk; the scratch disk is not the root
// filesystem).
var doRootDisks = map[string]int64{
	"s-1vcpu-2gb": 50 * sizing.GB, "s-2vcpu-2gb": 60 * sizing.GB, "s-2vcpu-4gb": 80 * sizing.GB, "s-4vcpu-8gb": 160 * sizing.GB,
	"s-6vcpu-16gb": 320 * sizing.GB, "s-8vcpu-16gb": 320 * sizing.GB, "s-8vcpu-32gb": 640 * sizing.GB, "s-12vcpu-48gb": 960 * sizing.GB,
	"s-16vcpu-64gb": 1280 * sizing.GB, "s-20vcpu-96gb": 1920 * sizing.GB, "s-24vcpu-128gb": 2560 * sizing.GB, "s-32vcpu-192gb": 3840 * sizing.GB,

	"g-2vcpu-8gb": 25 * sizing.GB, "g-4vcpu-16gb": 50 * sizing.GB, "g-8vcpu-32gb": 100 * sizing.GB, "g-16vcpu-64gb": 200 * sizing.GB,
	"g-32vcpu-128gb": 400 * sizing.GB, "g-40vcpu-160gb": 500 * sizing.GB,

	"c-2": 25 * sizing.GB, "c-4": 50 * sizing.GB, "c-8": 100 * sizing.GB, "c-16": 200 * sizing.GB, "c-32": 400 * sizing.GB, "c-48": 600 * sizing.GB,

	"m-2vcpu-16gb": 50 * sizing.GB, "m-4vcpu-32gb": 100 * sizing.GB, "m-8vcpu-64gb": 200 * sizing.GB, "m-16vcpu-128gb": 400 * sizing.GB,
	"m-24vcpu-192gb": 600 * sizing.GB, "m-32vcpu-256gb": 800 * sizing.GB,

	"gpu-l40sx1-48gb": 500 * sizing.GB, "gpu-h100x1-80gb": 720 * sizing.GB, "gpu-h100x8-640gb": 2046 * sizing.GB,
}

// doRootDisk is the slug's listed disk; a slug missing from the list gets
// the smallest DOKS node's 25 GB, so disk-hungry pods are never bought a
// node on a guess.
func doRootDisk(name string) int64 {
	if d, ok := doRootDisks[name]; ok {
		return d
	}
	return 25 * sizing.GB
}
