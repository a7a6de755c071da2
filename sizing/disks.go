package sizing

import "github.com/hanzoai/visor-fleet/types"

// Root disks, for ephemeral storage. A node's allocatable ephemeral storage
// is its root filesystem less the kubelet's hard eviction threshold
// (nodefs.available<10%, the kubelet's default): pods whose requests sum
// past that are never scheduled there.
const gb = int64(1000 * 1000 * 1000) // providers size disks in decimal GB

// ephemeralReserve is what the kubelet keeps back from pods on a root disk.
func ephemeralReserve(disk int64) int64 { return disk / 10 }

// withRootDisks gives each size its root disk and the reserve on it.
func withRootDisks(catalog []types.InstanceType, disk func(name string) int64) []types.InstanceType {
	for i := range catalog {
		d := disk(catalog[i].Name)
		catalog[i].EphemeralStorage = d
		catalog[i].Overhead.EphemeralStorage = ephemeralReserve(d)
	}
	return catalog
}

// eksRootDisk: an EKS managed node group's nodes boot with the launch
// template's default 20 GiB gp3 volume unless the group sets diskSize;
// every size alike.
func eksRootDisk(string) int64 { return 20 * types.GiB }

// doRootDisks are the droplets' local SSDs as DigitalOcean lists them per
// slug (GPU droplets: their boot disk; the scratch disk is not the root
// filesystem).
var doRootDisks = map[string]int64{
	"s-1vcpu-2gb": 50 * gb, "s-2vcpu-2gb": 60 * gb, "s-2vcpu-4gb": 80 * gb, "s-4vcpu-8gb": 160 * gb,
	"s-6vcpu-16gb": 320 * gb, "s-8vcpu-16gb": 320 * gb, "s-8vcpu-32gb": 640 * gb, "s-12vcpu-48gb": 960 * gb,
	"s-16vcpu-64gb": 1280 * gb, "s-20vcpu-96gb": 1920 * gb, "s-24vcpu-128gb": 2560 * gb, "s-32vcpu-192gb": 3840 * gb,

	"g-2vcpu-8gb": 25 * gb, "g-4vcpu-16gb": 50 * gb, "g-8vcpu-32gb": 100 * gb, "g-16vcpu-64gb": 200 * gb,
	"g-32vcpu-128gb": 400 * gb, "g-40vcpu-160gb": 500 * gb,

	"c-2": 25 * gb, "c-4": 50 * gb, "c-8": 100 * gb, "c-16": 200 * gb, "c-32": 400 * gb, "c-48": 600 * gb,

	"m-2vcpu-16gb": 50 * gb, "m-4vcpu-32gb": 100 * gb, "m-8vcpu-64gb": 200 * gb, "m-16vcpu-128gb": 400 * gb,
	"m-24vcpu-192gb": 600 * gb, "m-32vcpu-256gb": 800 * gb,

	"gpu-l40sx1-48gb": 500 * gb, "gpu-h100x1-80gb": 720 * gb, "gpu-h100x8-640gb": 2046 * gb,
}

// doRootDisk is the slug's listed disk; a slug missing from the list gets
// the smallest DOKS node's 25 GB, so disk-hungry pods are never bought a
// node on a guess.
func doRootDisk(name string) int64 {
	if d, ok := doRootDisks[name]; ok {
		return d
	}
	return 25 * gb
}

// hetznerRootDisks are the server types' local disks as Hetzner lists them.
var hetznerRootDisks = map[string]int64{
	"cx22": 40 * gb, "cx32": 80 * gb, "cx42": 160 * gb, "cx52": 320 * gb,
	"cpx11": 40 * gb, "cpx21": 80 * gb, "cpx31": 160 * gb, "cpx41": 240 * gb, "cpx51": 360 * gb,
	"ccx13": 80 * gb, "ccx23": 160 * gb, "ccx33": 240 * gb, "ccx43": 360 * gb, "ccx53": 600 * gb, "ccx63": 960 * gb,
}

// hetznerRootDisk is the type's listed disk, or the smallest type's 40 GB.
func hetznerRootDisk(name string) int64 {
	if d, ok := hetznerRootDisks[name]; ok {
		return d
	}
	return 40 * gb
}

// simRootDisk: every simulated node has a 100 GiB disk.
func simRootDisk(string) int64 { return 100 * types.GiB }

// defaultVSphereDiskGiB is a vSphere template's root disk when its
// configuration does not say (diskGiB): vSphere has no standard size, so
// a modest 40 GiB, which under-promises disk rather than over-promising it.
const defaultVSphereDiskGiB = 40
