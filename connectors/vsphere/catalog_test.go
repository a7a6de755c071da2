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
