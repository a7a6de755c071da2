package sizing

import "github.com/hanzoai/visor-fleet/types"

// Root disks, for ephemeral storage: each connector's catalog gives its
// sizes their disks with WithRootDisks. A node's allocatable ephemeral storage
// is its root filesystem less the kubelet's hard eviction threshold
// (nodefs.available<10%, the kubelet's default): pods whose requests sum
// past that are never scheduled there.

// GB is a decimal gigabyte: providers size disks in them.
const GB = int64(1000 * 1000 * 1000)

// EphemeralReserve is what the kubelet keeps back from pods on a root disk.
func EphemeralReserve(disk int64) int64 { return disk / 10 }

// WithRootDisks gives each size its root disk and the reserve on it.
func WithRootDisks(catalog []types.InstanceType, disk func(name string) int64) []types.InstanceType {
	for i := range catalog {
		catalog[i] = WithRootDisk(catalog[i], disk(catalog[i].Name))
	}
	return catalog
}

// WithRootDisk gives one size a root disk of disk bytes and the reserve on it.
func WithRootDisk(it types.InstanceType, disk int64) types.InstanceType {
	it.EphemeralStorage = disk
	it.Overhead.EphemeralStorage = EphemeralReserve(disk)
	return it
}
