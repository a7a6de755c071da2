package sizing

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/hanzoai/visor-fleet/types"
)

// Shape is the hardware and price of one VM template an operator offers as
// a node size on hardware of their own (vSphere, Proxmox, KVM), as written
// in the connector's configuration.
type Shape struct {
	Name      string `json:"name"`
	CPUs      int64  `json:"cpus"`
	MemoryMiB int64  `json:"memoryMiB"`
	GPUs      int64  `json:"gpus,omitempty"`
	GPUModel  string `json:"gpuModel,omitempty"`
	// MaxPods defaults to the kubelet's 110.
	MaxPods int64 `json:"maxPods,omitempty"`
	// DiskGiB is the template's root disk, the nodes' ephemeral storage;
	// 0 means DefaultShapeDiskGiB.
	DiskGiB int64 `json:"diskGiB,omitempty"`
	// HourlyPrice is the internal chargeback rate in US dollars; zero is
	// allowed for hardware nobody is billed for.
	HourlyPrice float64 `json:"hourlyPrice"`
	// PriceDate says when the rate was set.
	PriceDate string `json:"priceDate,omitempty"`
}

// DefaultShapeMaxPods is the kubelet's default pod limit.
const DefaultShapeMaxPods = 110

// DefaultShapeDiskGiB is a template's root disk when its configuration does
// not say (diskGiB): self-hosted hypervisors have no standard size, so a
// modest 40 GiB, which under-promises disk rather than over-promising it.
const DefaultShapeDiskGiB = 40

// Bounds well above any VM a hypervisor can run; they catch unit mistakes
// (memory in bytes instead of MiB) before the arithmetic can overflow.
const (
	maxShapeCPUs      = 768
	maxShapeMemoryMiB = 24 << 20 // 24 TiB
	maxShapeDiskGiB   = 64 << 10 // 64 TiB
)

// ShapeCatalog validates the configured shapes of one hypervisor family
// ("vsphere", "proxmox", "kvm") and returns them as a catalog whose nodes
// reserve daemons. Every problem is reported, each naming the template and
// field.
func ShapeCatalog(family string, daemons DaemonAllowance, templates []Shape) ([]types.InstanceType, error) {
	var errs []error
	seen := make(map[string]int, len(templates))
	out := make([]types.InstanceType, 0, len(templates))
	for i, t := range templates {
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s template [%d] %q: %s", family, i, t.Name, fmt.Sprintf(format, a...)))
		}
		if t.Name == "" {
			bad("name is empty")
		} else if j, dup := seen[t.Name]; dup {
			bad("name repeats template [%d]", j)
		} else {
			seen[t.Name] = i
		}
		if t.CPUs <= 0 || t.CPUs > maxShapeCPUs {
			bad("cpus must be within [1, %d], got %d", maxShapeCPUs, t.CPUs)
		}
		if t.MemoryMiB <= 0 || t.MemoryMiB > maxShapeMemoryMiB {
			bad("memoryMiB must be within [1, %d], got %d", maxShapeMemoryMiB, t.MemoryMiB)
		}
		if t.GPUs < 0 {
			bad("gpus must be >= 0, got %d", t.GPUs)
		}
		if t.GPUModel != "" && t.GPUs == 0 {
			bad("gpuModel %q is set but gpus is 0", t.GPUModel)
		}
		if t.MaxPods < 0 {
			bad("maxPods must be >= 0, got %d", t.MaxPods)
		}
		if t.DiskGiB < 0 || t.DiskGiB > maxShapeDiskGiB {
			bad("diskGiB must be within [0, %d], got %d", maxShapeDiskGiB, t.DiskGiB)
		}
		if t.HourlyPrice < 0 || math.IsNaN(t.HourlyPrice) || math.IsInf(t.HourlyPrice, 0) {
			bad("hourlyPrice must be finite and >= 0, got %v", t.HourlyPrice)
		}
		if t.CPUs <= 0 || t.CPUs > maxShapeCPUs || t.MemoryMiB <= 0 || t.MemoryMiB > maxShapeMemoryMiB || t.MaxPods < 0 {
			continue
		}
		maxPods := t.MaxPods
		if maxPods == 0 {
			maxPods = DefaultShapeMaxPods
		}
		it := CatalogRow{Name: t.Name, Family: family, VCPU: t.CPUs, MemoryMiB: t.MemoryMiB, GPUs: t.GPUs, GPUModel: t.GPUModel, MaxPods: maxPods, Hourly: t.HourlyPrice}.
			InstanceType(t.PriceDate, func(cpu, mem, _ int64) types.Resources { return StandardOverhead(cpu, mem, daemons) })
		it = WithRootDisk(it, cmp.Or(max(t.DiskGiB, 0), DefaultShapeDiskGiB)*types.GiB)
		if a := it.Allocatable(); a.MilliCPU <= 0 || a.Memory <= 0 || a.Pods <= 0 {
			bad("too small to run pods: node overhead %s leaves %s", it.Overhead, a)
		}
		out = append(out, it)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
