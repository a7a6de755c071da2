package azure

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the pay-as-you-go Linux list prices below (East US)
// were taken.
const priceDate = "2026-11"

// osDiskGB is the managed OS disk every VM gets: the catalog's root disk
// and the size the scale set asks for, so the two cannot disagree.
const osDiskGB = 128

// azureDaemons: the CNI, kube-proxy and the Azure disk CSI node plugin on
// a self-managed (kubeadm) cluster.
var azureDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 300 * types.MiB, Pods: 3}

// Catalog lists general-purpose (Dsv5, Dpsv5 on Arm), memory-optimised
// (Esv5), compute-optimised (Fsv2) and GPU (NCasT4_v3, NC A100 v4) sizes.
func Catalog() []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("Standard_D2s_v5", "Dsv5", 2, 8*gib, 0, "", 110, 0.096),
		row("Standard_D4s_v5", "Dsv5", 4, 16*gib, 0, "", 110, 0.192),
		row("Standard_D8s_v5", "Dsv5", 8, 32*gib, 0, "", 110, 0.384),
		row("Standard_D16s_v5", "Dsv5", 16, 64*gib, 0, "", 110, 0.768),
		row("Standard_D4ps_v5", "Dpsv5", 4, 16*gib, 0, "", 110, 0.154),
		row("Standard_E4s_v5", "Esv5", 4, 32*gib, 0, "", 110, 0.252),
		row("Standard_E8s_v5", "Esv5", 8, 64*gib, 0, "", 110, 0.504),
		row("Standard_F4s_v2", "Fsv2", 4, 8*gib, 0, "", 110, 0.169),
		row("Standard_F8s_v2", "Fsv2", 8, 16*gib, 0, "", 110, 0.338),
		row("Standard_NC4as_T4_v3", "NCasT4_v3", 4, 28*gib, 1, "T4", 110, 0.526),
		row("Standard_NC24ads_A100_v4", "NCadsA100v4", 24, 220*gib, 1, "A100", 110, 3.673),
	}
	catalog := sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, azureDaemons)
	}), func(string) int64 { return osDiskGB * sizing.GB })
	for i := range catalog {
		if catalog[i].Family == "Dpsv5" {
			catalog[i].Arch = "arm64"
		}
	}
	return catalog
}
