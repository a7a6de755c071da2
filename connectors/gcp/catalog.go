package gcp

import (
	"strings"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the on-demand Linux list prices below (us-central1,
// Iowa, US dollars, no sustained-use or committed-use discount) were
// taken. Regions differ; a clusters file's catalog section overrides them.
const priceDate = "2026-11"

// defaultBootDiskGB is the boot disk when the configuration does not say:
// the catalog's root disk and the size the instance template asks for.
const defaultBootDiskGB = 100

// gcpDaemons: the CNI, kube-proxy, the Compute Engine persistent disk CSI
// node plugin and the guest agent on a self-managed (kubeadm) node.
var gcpDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 300 * types.MiB, Pods: 3}

// Catalog lists general-purpose (E2, N2, C3), memory-optimised (N2
// highmem), Arm (T2A, Ampere Altra) and GPU (G2 with an NVIDIA L4, A2 with
// an A100 40GB; both accelerator-optimised, the GPU part of the machine
// type) sizes, each with the default 100 GB boot disk.
func Catalog() []types.InstanceType { return catalogWithDisk(defaultBootDiskGB) }

func catalogWithDisk(bootDiskGB int64) []types.InstanceType {
	const gib = 1024
	row := sizing.Row
	rows := []sizing.CatalogRow{
		row("e2-standard-2", "e2", 2, 8*gib, 0, "", 110, 0.067006),
		row("e2-standard-4", "e2", 4, 16*gib, 0, "", 110, 0.134012),
		row("e2-standard-8", "e2", 8, 32*gib, 0, "", 110, 0.268024),
		row("e2-standard-16", "e2", 16, 64*gib, 0, "", 110, 0.536048),
		row("n2-standard-4", "n2", 4, 16*gib, 0, "", 110, 0.194236),
		row("n2-standard-8", "n2", 8, 32*gib, 0, "", 110, 0.388472),
		row("n2-highmem-4", "n2", 4, 32*gib, 0, "", 110, 0.262036),
		row("n2-highmem-8", "n2", 8, 64*gib, 0, "", 110, 0.524072),
		row("c3-standard-4", "c3", 4, 16*gib, 0, "", 110, 0.201608),
		row("c3-standard-8", "c3", 8, 32*gib, 0, "", 110, 0.403216),
		row("t2a-standard-4", "t2a", 4, 16*gib, 0, "", 110, 0.154),
		row("t2a-standard-8", "t2a", 8, 32*gib, 0, "", 110, 0.308),
		row("g2-standard-4", "g2", 4, 16*gib, 1, "L4", 110, 0.706832),
		row("a2-highgpu-1g", "a2", 12, 85*gib, 1, "A100", 110, 3.673385),
	}
	catalog := sizing.WithRootDisks(sizing.BuildCatalog(priceDate, rows, func(cpu, mem, _ int64) types.Resources {
		return sizing.StandardOverhead(cpu, mem, gcpDaemons)
	}), func(string) int64 { return bootDiskGB * types.GiB })
	for i := range catalog {
		if isArm(catalog[i].Name) {
			catalog[i].Arch = "arm64"
		}
	}
	return catalog
}

// isArm reports the Arm machine families (T2A, C4A, Axion N4A).
func isArm(machineType string) bool {
	for _, f := range []string{"t2a-", "c4a-", "n4a-"} {
		if strings.HasPrefix(machineType, f) {
			return true
		}
	}
	return false
}

// hasGPU reports a machine type whose GPUs come with it: such a VM must
// stop, not live-migrate, for host maintenance.
func hasGPU(machineType string) bool {
	for _, f := range []string{"a2-", "a3-", "a4-", "g2-", "g4-"} {
		if strings.HasPrefix(machineType, f) {
			return true
		}
	}
	return false
}
