package sizing

import (
	"math"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

func TestBuiltinCatalogsAreSane(t *testing.T) {
	for _, provider := range []string{"digitalocean", "aws", "hetzner", "sim"} {
		t.Run(provider, func(t *testing.T) {
			catalog, err := CatalogFor(provider)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, it := range catalog {
				if seen[it.Name] {
					t.Errorf("%s repeats", it.Name)
				}
				seen[it.Name] = true
				if why := unusable(it); why != "" {
					t.Errorf("%s unusable: %s", it.Name, why)
				}
				a := it.Allocatable()
				if a.MilliCPU <= 0 || a.Memory <= 0 || a.Pods <= 0 || it.HourlyPrice <= 0 || it.PriceDate != priceDate {
					t.Errorf("%s: allocatable %s, price %v dated %q", it.Name, a, it.HourlyPrice, it.PriceDate)
				}
				if (it.GPUs > 0) != (it.GPUModel != "") {
					t.Errorf("%s: %d GPUs of model %q", it.Name, it.GPUs, it.GPUModel)
				}
				// Overhead is real but never most of a node.
				if it.Overhead.MilliCPU <= 0 || it.Overhead.Memory <= 0 || it.Overhead.MilliCPU*2 > it.MilliCPU || it.Overhead.Memory*2 > it.Memory {
					t.Errorf("%s: overhead %s of %dm/%dMi", it.Name, it.Overhead, it.MilliCPU, it.Memory/types.MiB)
				}
			}
			// Catalogs are fresh copies: editing one must not leak.
			catalog[0].HourlyPrice = 999
			if again, _ := CatalogFor(provider); again[0].HourlyPrice == 999 {
				t.Error("catalog shares its backing array between calls")
			}
		})
	}
}

func TestCatalogFamilies(t *testing.T) {
	prefixes := map[string]bool{}
	for _, it := range DigitalOceanCatalog() {
		prefixes[strings.SplitN(it.Name, "-", 2)[0]] = true
	}
	for _, p := range []string{"s", "g", "c", "m"} {
		if !prefixes[p] {
			t.Errorf("DigitalOcean catalog lacks the %s-* family", p)
		}
	}
	var awsGPU, awsFamilies = 0, map[string]bool{}
	for _, it := range AWSCatalog() {
		awsFamilies[it.Family] = true
		if it.GPUs > 0 {
			awsGPU++
		}
	}
	for _, f := range []string{"m6i", "c6i", "r6i", "g5", "p4d"} {
		if !awsFamilies[f] {
			t.Errorf("AWS catalog lacks %s", f)
		}
	}
	if awsGPU < 3 {
		t.Errorf("AWS catalog has %d GPU types", awsGPU)
	}
	hetzner := map[string]bool{}
	for _, it := range HetznerCatalog() {
		hetzner[it.Family] = true
	}
	if !hetzner["cx"] || !hetzner["cpx"] || !hetzner["ccx"] {
		t.Errorf("Hetzner families %v", hetzner)
	}
	want := []string{"sim-2c4g", "sim-4c8g", "sim-8c16g", "sim-16c64g", "sim-gpu-8c32g-1xa10"}
	for i, it := range SimCatalog() {
		if it.Name != want[i] {
			t.Errorf("sim size %d is %s, want %s", i, it.Name, want[i])
		}
	}
}

func TestOverheadFormulas(t *testing.T) {
	for _, tc := range []struct{ milliCPU, want int64 }{
		{1000, 60}, {2000, 70}, {4000, 80}, {8000, 90}, {64000, 230},
	} {
		if got := kubeReservedCPU(tc.milliCPU); got != tc.want {
			t.Errorf("kubeReservedCPU(%d) = %d, want %d", tc.milliCPU, got, tc.want)
		}
	}
	gi := types.GiB
	for _, tc := range []struct{ mem, want int64 }{
		{4 * gi, gi}, {8 * gi, gi + 4*gi*20/100}, {16 * gi, gi + 4*gi*20/100 + 8*gi*10/100},
	} {
		if got := kubeReservedMemory(tc.mem); got != tc.want {
			t.Errorf("kubeReservedMemory(%d GiB) = %d, want %d", tc.mem/gi, got, tc.want)
		}
	}
	// The EKS AMI reserves memory from max pods: 11Mi each plus 255Mi.
	m5, _ := catalogEntry(AWSCatalog(), "m6i.large")
	if want := 11*29*types.MiB + 255*types.MiB + evictionHard + eksDaemons.memory; m5.Overhead.Memory != want {
		t.Errorf("m6i.large memory overhead %d, want %d", m5.Overhead.Memory, want)
	}
}

func TestCatalogForUnknownProvider(t *testing.T) {
	_, err := CatalogFor("linode")
	if err == nil || !strings.Contains(err.Error(), `"linode"`) || !strings.Contains(err.Error(), "digitalocean") {
		t.Fatalf("error %v should name linode and list the known providers", err)
	}
	if _, err := CatalogFor("vsphere"); err == nil || !strings.Contains(err.Error(), "VSphereCatalog") {
		t.Fatalf("vsphere error %v should point at VSphereCatalog", err)
	}
}

func TestRestrict(t *testing.T) {
	sim := SimCatalog()
	all, err := Restrict(sim, nil)
	if err != nil || len(all) != len(sim) {
		t.Fatalf("empty allowed list: %d sizes, %v", len(all), err)
	}
	some, err := Restrict(sim, []string{"sim-8c16g", "sim-2c4g", "sim-2c4g"})
	if err != nil || len(some) != 2 || some[0].Name != "sim-2c4g" || some[1].Name != "sim-8c16g" {
		t.Fatalf("got %v, %v; want sim-2c4g, sim-8c16g in catalog order", some, err)
	}
	_, err = Restrict(sim, []string{"sim-2c4g", "sim-3c", "huge"})
	if err == nil || !strings.Contains(err.Error(), "huge, sim-3c") {
		t.Fatalf("error %v should name both unknown sizes", err)
	}
	if _, err = Restrict(sim, []string{""}); err == nil {
		t.Fatal("an empty size name must be rejected")
	}
}

func TestOverridePrices(t *testing.T) {
	sim := SimCatalog()
	out, err := OverridePrices(sim, map[string]float64{"sim-2c4g": 0.5, "sim-4c8g": 0})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].HourlyPrice != 0.5 || out[0].PriceDate != overridePriceDate || out[1].HourlyPrice != 0 || out[2].HourlyPrice != sim[2].HourlyPrice {
		t.Fatalf("overrides not applied as asked: %+v", out[:3])
	}
	if sim[0].HourlyPrice == 0.5 {
		t.Fatal("OverridePrices changed its input")
	}
	for _, bad := range []map[string]float64{
		{"sim-9c": 0.1},
		{"sim-2c4g": -0.01},
		{"sim-2c4g": math.NaN()},
		{"sim-2c4g": math.Inf(1)},
	} {
		if _, err := OverridePrices(sim, bad); err == nil {
			t.Errorf("override %v accepted", bad)
		}
	}
	_, err = OverridePrices(sim, map[string]float64{"sim-9c": 1, "sim-2c4g": -1})
	if err == nil || !strings.Contains(err.Error(), "sim-9c") || !strings.Contains(err.Error(), "-1") {
		t.Fatalf("error %v should report both problems", err)
	}
}

func TestVSphereCatalog(t *testing.T) {
	good := []VSphereTemplate{
		{Name: "k8s-small", CPUs: 4, MemoryMiB: 16384, HourlyPrice: 0.05, PriceDate: "2026-10"},
		{Name: "k8s-gpu", CPUs: 16, MemoryMiB: 131072, GPUs: 2, GPUModel: "A40", MaxPods: 64},
	}
	catalog, err := VSphereCatalog(good)
	if err != nil {
		t.Fatal(err)
	}
	if catalog[0].MaxPods != defaultMaxPods || catalog[0].MilliCPU != 4000 || catalog[0].Memory != 16*types.GiB ||
		catalog[0].PriceDate != "2026-10" || catalog[1].GPUs != 2 || catalog[1].MaxPods != 64 {
		t.Fatalf("templates not carried over: %+v", catalog)
	}
	for _, tc := range []struct {
		name string
		tpl  VSphereTemplate
		want string
	}{
		{"no name", VSphereTemplate{CPUs: 2, MemoryMiB: 4096}, "name is empty"},
		{"no cpus", VSphereTemplate{Name: "x", MemoryMiB: 4096}, "cpus"},
		{"memory in bytes by mistake", VSphereTemplate{Name: "x", CPUs: 2, MemoryMiB: 8 << 30}, "memoryMiB"},
		{"negative gpus", VSphereTemplate{Name: "x", CPUs: 2, MemoryMiB: 4096, GPUs: -1}, "gpus"},
		{"model without gpus", VSphereTemplate{Name: "x", CPUs: 2, MemoryMiB: 4096, GPUModel: "A40"}, "gpuModel"},
		{"negative max pods", VSphereTemplate{Name: "x", CPUs: 2, MemoryMiB: 4096, MaxPods: -3}, "maxPods"},
		{"negative price", VSphereTemplate{Name: "x", CPUs: 2, MemoryMiB: 4096, HourlyPrice: -1}, "hourlyPrice"},
		{"too small for its overhead", VSphereTemplate{Name: "x", CPUs: 1, MemoryMiB: 256}, "too small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := VSphereCatalog([]VSphereTemplate{good[0], tc.tpl})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "template [1]") {
				t.Fatalf("error %v should name template [1] and %q", err, tc.want)
			}
		})
	}
	_, err = VSphereCatalog([]VSphereTemplate{good[0], good[0]})
	if err == nil || !strings.Contains(err.Error(), "repeats template [0]") {
		t.Fatalf("duplicate names: %v", err)
	}
}
