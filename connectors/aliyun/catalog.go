package aliyun

import (
	_ "embed"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the pay-as-you-go list prices in catalog.csv were taken (US
// East 1, Virginia, Linux, in US dollars). Regions differ; a clusters
// file's catalog section overrides them.
const priceDate = "2026-11"

// aliyunDaemons: Terway or Flannel, kube-proxy, the CSI node plugin and
// the cloud monitor agent on an ACK or self-managed node.
var aliyunDaemons = sizing.DaemonAllowance{MilliCPU: 200, Memory: 300 * types.MiB, Pods: 4}

// defaultSystemDiskGiB is the system (root) disk when the configuration
// does not say; ECS's own default for Linux images.
const defaultSystemDiskGiB = 40

//go:embed catalog.csv
var catalogTable string

// catalogRows are the table, read once.
var catalogRows = sizing.MustParseCatalogTable(catalogTable)

// Catalog lists ECS instance types: general purpose (g7), compute (c7),
// memory (r7) and GPU (gn7i with an NVIDIA A10, gn6i with a T4), each with
// the default 40 GiB system disk.
func Catalog() []types.InstanceType { return catalogWithDisk(defaultSystemDiskGiB) }

func catalogWithDisk(systemDiskGiB int64) []types.InstanceType {
	return sizing.WithRootDisks(sizing.BuildCatalog(priceDate, catalogRows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, aliyunDaemons)
	}), func(string) int64 { return systemDiskGiB * types.GiB })
}
