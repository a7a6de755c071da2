package sizing

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/hanzoai/visor-fleet/types"
)

// VSphereTemplate is one VM template an operator offers as a node size, as
// written in the vSphere connector's configuration.
type VSphereTemplate struct {
	Name      string `json:"name"`
	CPUs      int64  `json:"cpus"`
	MemoryMiB int64  `json:"memoryMiB"`
	GPUs      int64  `json:"gpus,omitempty"`
	GPUModel  string `json:"gpuModel,omitempty"`
	// MaxPods defaults to the kubelet's 110.
	MaxPods int64 `json:"maxPods,omitempty"`
	// DiskGiB is the template's root disk, the nodes' ephemeral storage;
	// 0 means defaultVSphereDiskGiB.
	DiskGiB int64 `json:"diskGiB,omitempty"`
	// HourlyPrice is the internal chargeback rate in US dollars; zero is
	// allowed for hardware nobody is billed for.
	HourlyPrice float64 `json:"hourlyPrice"`
	// PriceDate says when the rate was set.
	PriceDate string `json:"priceDate,omitempty"`
}

const defaultMaxPods = 110

// Bounds well above any VM vSphere can run; they catch unit mistakes
// (memory in bytes instead of MiB) before the arithmetic can overflow.
const (
	maxTemplateCPUs      = 768
	maxTemplateMemoryMiB = 24 << 20 // 24 TiB
	maxTemplateDiskGiB   = 64 << 10 // 64 TiB, vSphere's largest virtual disk
)

// vsphereDaemons: CNI, kube-proxy and the vSphere CSI node plugin.
var vsphereDaemons = daemonAllowance{milliCPU: 150, memory: 250 * types.MiB, pods: 3}

// VSphereCatalog validates the configured templates and returns them as a
// catalog. Every problem is reported, each naming the template and field.
func VSphereCatalog(templates []VSphereTemplate) ([]types.InstanceType, error) {
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
		it := row{t.Name, "vsphere", t.CPUs, t.MemoryMiB, t.GPUs, t.GPUModel, maxPods, t.HourlyPrice}.
			instanceType(func(cpu, mem, _ int64) types.Resources { return standardOverhead(cpu, mem, vsphereDaemons) })
		it.PriceDate = t.PriceDate
		disk := cmp.Or(max(t.DiskGiB, 0), defaultVSphereDiskGiB) * types.GiB
		it.EphemeralStorage, it.Overhead.EphemeralStorage = disk, ephemeralReserve(disk)
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
