package types

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceGPU is the extended resource GPU nodes advertise.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// Resources is an amount of the things a pod asks a node for. CPU is in
// millicores, memory and ephemeral storage in bytes, so that arithmetic
// stays exact.
type Resources struct {
	MilliCPU int64 `json:"milliCPU"`
	Memory   int64 `json:"memoryBytes"`
	GPUs     int64 `json:"gpus,omitempty"`
	Pods     int64 `json:"pods,omitempty"`
	// EphemeralStorage is local disk (emptyDir, logs, writable layers) as
	// the scheduler counts it: requested by pods, allocatable on nodes.
	// Omitted when zero, so observations recorded before it decode alike.
	EphemeralStorage int64 `json:"ephemeralStorageBytes,omitempty"`
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU + o.MilliCPU, Memory: r.Memory + o.Memory, GPUs: r.GPUs + o.GPUs,
		Pods: r.Pods + o.Pods, EphemeralStorage: r.EphemeralStorage + o.EphemeralStorage}
}

// Times returns r taken n times.
func (r Resources) Times(n int64) Resources {
	return Resources{MilliCPU: r.MilliCPU * n, Memory: r.Memory * n, GPUs: r.GPUs * n,
		Pods: r.Pods * n, EphemeralStorage: r.EphemeralStorage * n}
}

// Max is the larger of r and o in every dimension.
func (r Resources) Max(o Resources) Resources {
	return Resources{MilliCPU: max(r.MilliCPU, o.MilliCPU), Memory: max(r.Memory, o.Memory), GPUs: max(r.GPUs, o.GPUs),
		Pods: max(r.Pods, o.Pods), EphemeralStorage: max(r.EphemeralStorage, o.EphemeralStorage)}
}

// Min is the smaller of r and o in every dimension.
func (r Resources) Min(o Resources) Resources {
	return Resources{MilliCPU: min(r.MilliCPU, o.MilliCPU), Memory: min(r.Memory, o.Memory), GPUs: min(r.GPUs, o.GPUs),
		Pods: min(r.Pods, o.Pods), EphemeralStorage: min(r.EphemeralStorage, o.EphemeralStorage)}
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU - o.MilliCPU, Memory: r.Memory - o.Memory, GPUs: r.GPUs - o.GPUs,
		Pods: r.Pods - o.Pods, EphemeralStorage: r.EphemeralStorage - o.EphemeralStorage}
}

// Fits reports whether r fits inside capacity c on every dimension. Like
// the scheduler, a node that reports no ephemeral storage holds no pod
// that requests some.
func (r Resources) Fits(c Resources) bool {
	return r.MilliCPU <= c.MilliCPU && r.Memory <= c.Memory && r.GPUs <= c.GPUs && r.Pods <= c.Pods &&
		r.EphemeralStorage <= c.EphemeralStorage
}

// IsNegative reports whether any dimension is below zero.
func (r Resources) IsNegative() bool {
	return r.MilliCPU < 0 || r.Memory < 0 || r.GPUs < 0 || r.Pods < 0 || r.EphemeralStorage < 0
}

// ResourceList renders r as a Kubernetes node capacity or allocatable
// list (GPUs as ResourceGPU, only when there are some).
func (r Resources) ResourceList() corev1.ResourceList {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.Memory, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(r.Pods, resource.DecimalSI),
	}
	if r.GPUs > 0 {
		l[ResourceGPU] = *resource.NewQuantity(r.GPUs, resource.DecimalSI)
	}
	if r.EphemeralStorage > 0 {
		l[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI)
	}
	return l
}

func (r Resources) String() string {
	s := fmt.Sprintf("cpu=%dm mem=%dMi", r.MilliCPU, r.Memory>>20)
	if r.GPUs > 0 {
		s += fmt.Sprintf(" gpu=%d", r.GPUs)
	}
	if r.Pods > 0 {
		s += fmt.Sprintf(" pods=%d", r.Pods)
	}
	if r.EphemeralStorage > 0 {
		s += fmt.Sprintf(" ephemeral-storage=%dMi", r.EphemeralStorage>>20)
	}
	return s
}

const (
	MiB = int64(1) << 20
	GiB = int64(1) << 30
)

// InstanceType is one size in a provider's catalog.
type InstanceType struct {
	Name     string `json:"name"`
	Family   string `json:"family,omitempty"`
	MilliCPU int64  `json:"milliCPU"`
	Memory   int64  `json:"memoryBytes"`
	GPUs     int64  `json:"gpus,omitempty"`
	GPUModel string `json:"gpuModel,omitempty"`
	MaxPods  int64  `json:"maxPods"`
	// EphemeralStorage is the root disk a node of this size boots with, in
	// bytes (0: the catalog does not say, and pods requesting ephemeral
	// storage fit none of it, as on a node reporting none).
	EphemeralStorage int64 `json:"ephemeralStorageBytes,omitempty"`
	// Arch is the CPU architecture as kubernetes.io/arch spells it; empty
	// means amd64 (see Architecture).
	Arch string `json:"arch,omitempty"`
	// Zones are where the provider can place nodes of this size, when it
	// says; nodes of a size without zones are known only by region.
	Zones []string `json:"zones,omitempty"`
	// HourlyPrice is in US dollars; PriceDate says when it was taken.
	HourlyPrice float64 `json:"hourlyPrice"`
	PriceDate   string  `json:"priceDate,omitempty"`
	// Overhead is what the kubelet, system daemons and eviction thresholds
	// reserve on every node of this size; pods never get it.
	Overhead Resources `json:"overhead"`
	// Offerings are the (zone, capacity type) ways to buy this size, each
	// with its price. Empty: on demand only, at HourlyPrice, in Zones.
	Offerings []Offering `json:"offerings,omitempty"`
}

// Allocatable is the capacity pods can use on one node of this size.
func (t InstanceType) Allocatable() Resources {
	return t.Capacity().Sub(t.Overhead)
}

// Capacity is one node of this size before any overhead.
func (t InstanceType) Capacity() Resources {
	return Resources{MilliCPU: t.MilliCPU, Memory: t.Memory, GPUs: t.GPUs, Pods: t.MaxPods, EphemeralStorage: t.EphemeralStorage}
}

// DefaultArch is the architecture of a catalog entry that names none.
const DefaultArch = "amd64"

// Architecture is Arch, or DefaultArch when the entry names none.
func (t InstanceType) Architecture() string {
	if t.Arch == "" {
		return DefaultArch
	}
	return t.Arch
}
