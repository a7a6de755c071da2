package azure

import (
	_ "embed"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the pay-as-you-go Linux list prices in catalog.csv (East US)
// were taken.
const priceDate = "2026-11"

// osDiskGB is the managed OS disk every VM gets: the catalog's root disk
// and the size the scale set asks for, so the two cannot disagree.
const osDiskGB = 128

// azureDaemons: the CNI, kube-proxy and the Azure disk CSI node plugin on
// a self-managed (kubeadm) cluster.
var azureDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 300 * types.MiB, Pods: 3}

//go:embed catalog.csv
var catalogTable string

// catalogRows are the table, read once.
var catalogRows = sizing.MustParseCatalogTable(catalogTable)

// Catalog lists general-purpose (Dsv5, Dpsv5 on Arm), memory-optimised
// (Esv5), compute-optimised (Fsv2) and GPU (NCasT4_v3, NC A100 v4) sizes.
func Catalog() []types.InstanceType {
	catalog := sizing.WithRootDisks(sizing.BuildCatalog(priceDate, catalogRows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, azureDaemons)
	}), func(string) int64 { return osDiskGB * sizing.GB })
	for i := range catalog {
		if catalog[i].Family == "Dpsv5" {
			catalog[i].Arch = "arm64"
		}
	}
	return catalog
}
