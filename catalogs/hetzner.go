package catalogs

import (
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Hetzner lists prices in euros; the catalog is in US dollars like every
// other, converted at this rate on priceDate.
const eurToUSD = 1.08

func eur(hourly float64) float64 { return hourly * eurToUSD }

// hetznerDaemons: the hcloud CCM's CSI node plugin, the CNI and kube-proxy
// on a self-managed (k3s/kubeadm) cluster.
var hetznerDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 250 * types.MiB, Pods: 3}

// Hetzner lists Hetzner Cloud server types: shared Intel (cx), shared
// AMD (cpx) and dedicated vCPU (ccx), at hourly list prices.
func Hetzner() []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("cx22", "cx", 2, 4*gib, 0, "", 110, eur(0.0060)),
		row("cx32", "cx", 4, 8*gib, 0, "", 110, eur(0.0104)),
		row("cx42", "cx", 8, 16*gib, 0, "", 110, eur(0.0264)),
		row("cx52", "cx", 16, 32*gib, 0, "", 110, eur(0.0527)),

		row("cpx11", "cpx", 2, 2*gib, 0, "", 110, eur(0.0070)),
		row("cpx21", "cpx", 3, 4*gib, 0, "", 110, eur(0.0130)),
		row("cpx31", "cpx", 4, 8*gib, 0, "", 110, eur(0.0232)),
		row("cpx41", "cpx", 8, 16*gib, 0, "", 110, eur(0.0426)),
		row("cpx51", "cpx", 16, 32*gib, 0, "", 110, eur(0.0897)),

		row("ccx13", "ccx", 2, 8*gib, 0, "", 110, eur(0.0238)),
		row("ccx23", "ccx", 4, 16*gib, 0, "", 110, eur(0.0475)),
		row("ccx33", "ccx", 8, 32*gib, 0, "", 110, eur(0.0950)),
		row("ccx43", "ccx", 16, 64*gib, 0, "", 110, eur(0.1900)),
		row("ccx53", "ccx", 32, 128*gib, 0, "", 110, eur(0.3800)),
		row("ccx63", "ccx", 48, 192*gib, 0, "", 110, eur(0.5700)),
	}
	return sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, hetznerDaemons)
	}), hetznerRootDisk)
}

// hetznerRootDisks are the server types' local disks as Hetzner lists them.
var hetznerRootDisks = map[string]int64{
	"cx22": 40 * sizing.GB, "cx32": 80 * sizing.GB, "cx42": 160 * sizing.GB, "cx52": 320 * sizing.GB,
	"cpx11": 40 * sizing.GB, "cpx21": 80 * sizing.GB, "cpx31": 160 * sizing.GB, "cpx41": 240 * sizing.GB, "cpx51": 360 * sizing.GB,
	"ccx13": 80 * sizing.GB, "ccx23": 160 * sizing.GB, "ccx33": 240 * sizing.GB, "ccx43": 360 * sizing.GB, "ccx53": 600 * sizing.GB, "ccx63": 960 * sizing.GB,
}

// hetznerRootDisk is the type's listed disk, or the smallest type's 40 GB.
func hetznerRootDisk(name string) int64 {
	if d, ok := hetznerRootDisks[name]; ok {
		return d
	}
	return 40 * sizing.GB
}
