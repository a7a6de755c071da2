package lightsail

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the Linux bundle prices below (with a public IPv4
// address, us-east-1, US dollars) were taken. Lightsail prices bundles by
// the month; the hourly price is the monthly one over 730 hours, as
// Lightsail itself prorates.
const priceDate = "2026-11"

// lightsailDaemons: the CNI and kube-proxy on a self-managed (kubeadm or
// k3s) node; Lightsail has no CSI node plugin.
var lightsailDaemons = sizing.DaemonAllowance{MilliCPU: 100, Memory: 200 * types.MiB, Pods: 2}

// bundleDisks is each bundle's SSD, in GB: the node's root disk.
var bundleDisks = map[string]int64{
	"small_3_0": 60, "medium_3_0": 80, "large_3_0": 160, "xlarge_3_0": 320, "2xlarge_3_0": 640, "4xlarge_3_0": 1280,
}

// Catalog lists the Linux bundles large enough for a Kubernetes node (2
// GB of memory and up). Lightsail bundles are burstable (a CPU baseline
// with credits) and offer no GPUs.
func Catalog() []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("small_3_0", "general", 2, 2*gib, 0, "", 110, 12.0/730),
		row("medium_3_0", "general", 2, 4*gib, 0, "", 110, 24.0/730),
		row("large_3_0", "general", 2, 8*gib, 0, "", 110, 44.0/730),
		row("xlarge_3_0", "general", 4, 16*gib, 0, "", 110, 84.0/730),
		row("2xlarge_3_0", "general", 8, 32*gib, 0, "", 110, 164.0/730),
		row("4xlarge_3_0", "general", 16, 64*gib, 0, "", 110, 384.0/730),
	}
	return sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, lightsailDaemons)
	}), func(name string) int64 { return bundleDisks[name] * types.GiB })
}
