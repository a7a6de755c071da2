package sizing

import "github.com/hanzoai/visor-fleet/types"

// Hetzner lists prices in euros; the catalog is in US dollars like every
// other, converted at this rate on priceDate.
const eurToUSD = 1.08

func eur(hourly float64) float64 { return hourly * eurToUSD }

// hetznerDaemons: the hcloud CCM's CSI node plugin, the CNI and kube-proxy
// on a self-managed (k3s/kubeadm) cluster.
var hetznerDaemons = daemonAllowance{milliCPU: 150, memory: 250 * types.MiB, pods: 3}

// HetznerCatalog lists Hetzner Cloud server types: shared Intel (cx), shared
// AMD (cpx) and dedicated vCPU (ccx), at hourly list prices.
func HetznerCatalog() []types.InstanceType {
	const gib = 1024
	rows := []row{
		{"cx22", "cx", 2, 4 * gib, 0, "", 110, eur(0.0060)},
		{"cx32", "cx", 4, 8 * gib, 0, "", 110, eur(0.0104)},
		{"cx42", "cx", 8, 16 * gib, 0, "", 110, eur(0.0264)},
		{"cx52", "cx", 16, 32 * gib, 0, "", 110, eur(0.0527)},

		{"cpx11", "cpx", 2, 2 * gib, 0, "", 110, eur(0.0070)},
		{"cpx21", "cpx", 3, 4 * gib, 0, "", 110, eur(0.0130)},
		{"cpx31", "cpx", 4, 8 * gib, 0, "", 110, eur(0.0232)},
		{"cpx41", "cpx", 8, 16 * gib, 0, "", 110, eur(0.0426)},
		{"cpx51", "cpx", 16, 32 * gib, 0, "", 110, eur(0.0897)},

		{"ccx13", "ccx", 2, 8 * gib, 0, "", 110, eur(0.0238)},
		{"ccx23", "ccx", 4, 16 * gib, 0, "", 110, eur(0.0475)},
		{"ccx33", "ccx", 8, 32 * gib, 0, "", 110, eur(0.0950)},
		{"ccx43", "ccx", 16, 64 * gib, 0, "", 110, eur(0.1900)},
		{"ccx53", "ccx", 32, 128 * gib, 0, "", 110, eur(0.3800)},
		{"ccx63", "ccx", 48, 192 * gib, 0, "", 110, eur(0.5700)},
	}
	return withRootDisks(buildCatalog(rows, func(cpu, mem, _ int64) types.Resources {
		return standardOverhead(cpu, mem, hetznerDaemons)
	}), hetznerRootDisk)
}
