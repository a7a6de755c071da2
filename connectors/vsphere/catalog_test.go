package vsphere

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

func TestShapeCatalog(t *testing.T) {
	good := []Shape{
		{Name: "k8s-small", CPUs: 4, MemoryMiB: 16384, HourlyPrice: 0.05, PriceDate: "2026-10"},
		{Name: "k8s-gpu", CPUs: 16, MemoryMiB: 131072, GPUs: 2, GPUModel: "A40", MaxPods: 64},
	}
	catalog, err := ShapeCatalog(good)
	if err != nil {
		t.Fatal(err)
	}
	if catalog[0].MaxPods != defaultMaxPods || catalog[0].MilliCPU != 4000 || catalog[0].Memory != 16*types.GiB ||
		catalog[0].PriceDate != "2026-10" || catalog[1].GPUs != 2 || catalog[1].MaxPods != 64 {
		t.Fatalf("templates not carried over: %+v", catalog)
	}
	for _, tc := range []struct {
		name string
		tpl  Shape
		want string
	}{
		{"no name", Shape{CPUs: 2, MemoryMiB: 4096}, "name is empty"},
		{"no cpus", Shape{Name: "x", MemoryMiB: 4096}, "cpus"},
		{"memory in bytes by mistake", Shape{Name: "x", CPUs: 2, MemoryMiB: 8 << 30}, "memoryMiB"},
		{"negative gpus", Shape{Name: "x", CPUs: 2, MemoryMiB: 4096, GPUs: -1}, "gpus"},
		{"model without gpus", Shape{Name: "x", CPUs: 2, MemoryMiB: 4096, GPUModel: "A40"}, "gpuModel"},
		{"negative max pods", Shape{Name: "x", CPUs: 2, MemoryMiB: 4096, MaxPods: -3}, "maxPods"},
		{"negative price", Shape{Name: "x", CPUs: 2, MemoryMiB: 4096, HourlyPrice: -1}, "hourlyPrice"},
		{"too small for its overhead", Shape{Name: "x", CPUs: 1, MemoryMiB: 256}, "too small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ShapeCatalog([]Shape{good[0], tc.tpl})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "template [1]") {
				t.Fatalf("error %v should name template [1] and %q", err, tc.want)
			}
		})
	}
	_, err = ShapeCatalog([]Shape{good[0], good[0]})
	if err == nil || !strings.Contains(err.Error(), "repeats template [0]") {
		t.Fatalf("duplicate names: %v", err)
	}
}

// A template's root disk is its nodes' ephemeral storage: the 40 GiB
// default when not configured, and a bad diskGiB names the template.
func TestShapeDisks(t *testing.T) {
	vs, err := ShapeCatalog([]Shape{{Name: "a", CPUs: 4, MemoryMiB: 8192}, {Name: "b", CPUs: 4, MemoryMiB: 8192, DiskGiB: 200}})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].EphemeralStorage != 40*types.GiB || vs[1].EphemeralStorage != 200*types.GiB {
		t.Errorf("vSphere disks %d, %d; want the 40GiB default and the configured 200GiB", vs[0].EphemeralStorage, vs[1].EphemeralStorage)
	}
	if got := vs[1].Allocatable().EphemeralStorage; got != 180*types.GiB {
		t.Errorf("allocatable disk %d, want 180GiB (the kubelet's 10%% eviction reserve kept back)", got)
	}
	if _, err := ShapeCatalog([]Shape{{Name: "neg", CPUs: 4, MemoryMiB: 8192, DiskGiB: -1}}); err == nil ||
		!strings.Contains(err.Error(), `"neg": diskGiB must be within`) {
		t.Errorf("a negative diskGiB: got %v, want an error naming the template and field", err)
	}
}
