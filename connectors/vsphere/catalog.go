package vsphere

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Shape is the hardware and price of one VM template an operator offers
// as a node size, as written in the connector's configuration.
type Shape struct {
	Name      string `json:"name"`
	CPUs      int64  `json:"cpus"`
	MemoryMiB int64  `json:"memoryMiB"`
	GPUs      int64  `json:"gpus,omitempty"`
	GPUModel  string `json:"gpuModel,omitempty"`
	// MaxPods defaults to the kubelet's 110.
	MaxPods int64 `json:"maxPods,omitempty"`
	// DiskGiB is the template's root disk, the nodes' ephemeral storage;
	// 0 means defaultDiskGiB.
	DiskGiB int64 `json:"diskGiB,omitempty"`
	// HourlyPrice is the internal chargeback rate in US dollars; zero is
	// allowed for hardware nobody is billed for.
	HourlyPrice float64 `json:"hourlyPrice"`
	// PriceDate says when the rate was set.
	PriceDate string `json:"priceDate,omitempty"`
}

const defaultMaxPods = 110

// defaultDiskGiB is a template's root disk when its configuration does not
// say (diskGiB): vSphere has no standard size, so a modest 40 GiB, which
// under-promises disk rather than over-promising it.
const defaultDiskGiB = 40

// Bounds well above any VM vSphere can run; they catch unit mistakes
// (memory in bytes instead of MiB) before the arithmetic can overflow.
const (
	maxTemplateCPUs      = 768
	maxTemplateMemoryMiB = 24 << 20 // 24 TiB
	maxTemplateDiskGiB   = 64 << 10 // 64 TiB, vSphere's largest virtual disk
)

// vsphereDaemons: CNI, kube-proxy and the vSphere CSI node plugin.
var vsphereDaemons = sizing.DaemonAllowance{MilliCPU: 150, Memory: 250 * types.MiB, Pods: 3}

// ShapeCatalog validates the configured shapes and returns them as a
// catalog. Every problem is reported, each naming the template and field.
func ShapeCatalog(templates []Shape) ([]types.InstanceType, error) {
	var errs []error
	seen := make(map[string]int, len(templates))
	out := make([]types.InstanceType, 0, len(templates))
	for i, t := range templates {
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("vsphere template [%d] %q: %s", i, t.Name, fmt.Sprintf(format, a...)))
		}
		if t.Name == "" {
			bad("name is empty")
		} else if j, dup := seen[t.Name]; dup {
			bad("name repeats template [%d]", j)
		} else {
			seen[t.Name] = i
		}
		if t.CPUs <= 0 || t.CPUs > maxTemplateCPUs {
			bad("cpus must be within [1, %d], got %d", maxTemplateCPUs, t.CPUs)
		}
		if t.MemoryMiB <= 0 || t.MemoryMiB > maxTemplateMemoryMiB {
			bad("memoryMiB must be within [1, %d], got %d", maxTemplateMemoryMiB, t.MemoryMiB)
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
		if t.DiskGiB < 0 || t.DiskGiB > maxTemplateDiskGiB {
			bad("diskGiB must be within [0, %d], got %d", maxTemplateDiskGiB, t.DiskGiB)
		}
		if t.HourlyPrice < 0 || math.IsNaN(t.HourlyPrice) || math.IsInf(t.HourlyPrice, 0) {
			bad("hourlyPrice must be finite and >= 0, got %v", t.HourlyPrice)
		}
		if t.CPUs <= 0 || t.CPUs > maxTemplateCPUs || t.MemoryMiB <= 0 || t.MemoryMiB > maxTemplateMemoryMiB || t.MaxPods < 0 {
			continue
		}
		maxPods := t.MaxPods
		if maxPods == 0 {
			maxPods = defaultMaxPods
		}
		it := sizing.CatalogRow{Name: t.Name, Family: "vsphere", VCPU: t.CPUs, MemoryMiB: t.MemoryMiB, GPUs: t.GPUs, GPUModel: t.GPUModel, MaxPods: maxPods, Hourly: t.HourlyPrice}.
			InstanceType(t.PriceDate, func(cpu, mem, _ int64) types.Resources { return sizing.StandardOverhead(cpu, mem, vsphereDaemons) })
		it = sizing.WithRootDisk(it, cmp.Or(max(t.DiskGiB, 0), defaultDiskGiB)*types.GiB)
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
