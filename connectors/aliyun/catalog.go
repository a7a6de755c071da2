package aliyun

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the pay-as-you-go list prices below were taken (US
// East 1, Virginia, Linux, in US dollars). Regions differ; a clusters
// file's catalog section overrides them.
const priceDate = "2026-11"

// aliyunDaemons: Terway or Flannel, kube-proxy, the CSI node plugin and
// the cloud monitor agent on an ACK or self-managed node.
var aliyunDaemons = sizing.DaemonAllowance{MilliCPU: 200, Memory: 300 * types.MiB, Pods: 4}

// defaultSystemDiskGiB is the system (root) disk when the configuration
// does not say; ECS's own default for Linux images.
const defaultSystemDiskGiB = 40

// Catalog lists ECS instance types: general purpose (g7), compute (c7),
// memory (r7) and GPU (gn7i with an NVIDIA A10, gn6i with a T4), each with
// the default 40 GiB system disk.
func Catalog() []types.InstanceType { return catalogWithDisk(defaultSystemDiskGiB) }

func catalogWithDisk(systemDiskGiB int64) []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("ecs.g7.large", "g7", 2, 8*gib, 0, "", 110, 0.098),
		row("ecs.g7.xlarge", "g7", 4, 16*gib, 0, "", 110, 0.196),
		row("ecs.g7.2xlarge", "g7", 8, 32*gib, 0, "", 110, 0.392),
		row("ecs.g7.4xlarge", "g7", 16, 64*gib, 0, "", 110, 0.784),

		row("ecs.c7.large", "c7", 2, 4*gib, 0, "", 110, 0.082),
		row("ecs.c7.xlarge", "c7", 4, 8*gib, 0, "", 110, 0.164),
		row("ecs.c7.2xlarge", "c7", 8, 16*gib, 0, "", 110, 0.328),

		row("ecs.r7.large", "r7", 2, 16*gib, 0, "", 110, 0.130),
		row("ecs.r7.xlarge", "r7", 4, 32*gib, 0, "", 110, 0.260),
		row("ecs.r7.2xlarge", "r7", 8, 64*gib, 0, "", 110, 0.520),

		row("ecs.gn6i-c4g1.xlarge", "gn6i", 4, 15*gib, 1, "T4", 110, 1.156),
		row("ecs.gn7i-c8g1.2xlarge", "gn7i", 8, 30*gib, 1, "A10", 110, 1.962),
	}
	return sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, aliyunDaemons)
	}), func(string) int64 { return systemDiskGiB * types.GiB })
}
