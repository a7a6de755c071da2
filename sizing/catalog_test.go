package sizing

import (
	"math"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

func TestOverheadFormulas(t *testing.T) {
	for _, tc := range []struct{ milliCPU, want int64 }{
		{1000, 60}, {2000, 70}, {4000, 80}, {8000, 90}, {64000, 230},
	} {
		if got := KubeReservedCPU(tc.milliCPU); got != tc.want {
			t.Errorf("KubeReservedCPU(%d) = %d, want %d", tc.milliCPU, got, tc.want)
		}
	}
	gi := types.GiB
	for _, tc := range []struct{ mem, want int64 }{
		{4 * gi, gi}, {8 * gi, gi + 4*gi*20/100}, {16 * gi, gi + 4*gi*20/100 + 8*gi*10/100},
	} {
		if got := KubeReservedMemory(tc.mem); got != tc.want {
			t.Errorf("KubeReservedMemory(%d GiB) = %d, want %d", tc.mem/gi, got, tc.want)
		}
	}
}

func TestCatalogRowsAndCheckCatalog(t *testing.T) {
	flat := func(_, _, _ int64) types.Resources {
		return types.Resources{MilliCPU: 100, Memory: 256 * types.MiB, Pods: 1}
	}
	rows := []CatalogRow{{"a-2", "a", 2, 4096, 0, "", 30, 0.1}, {"g-8", "g", 8, 32768, 1, "L4", 60, 0.9}}
	catalog := BuildCatalog("2026-01", rows, flat)
	if catalog[0].MilliCPU != 2000 || catalog[0].Memory != 4*types.GiB || catalog[0].PriceDate != "2026-01" ||
		catalog[0].Overhead.MilliCPU != 100 || catalog[1].GPUs != 1 || catalog[1].GPUModel != "L4" || catalog[1].MaxPods != 60 {
		t.Fatalf("rows not carried over: %+v", catalog)
	}
	if err := CheckCatalog(catalog); err != nil {
		t.Fatal(err)
	}
	bad := append(catalog, catalog[0], types.InstanceType{Name: "tiny", MilliCPU: 50, Memory: types.GiB, MaxPods: 1, Overhead: types.Resources{MilliCPU: 100}},
		types.InstanceType{Name: "gpu-no-model", MilliCPU: 2000, Memory: types.GiB, MaxPods: 5, GPUs: 1})
	err := CheckCatalog(bad)
	for _, want := range []string{`size [2] "a-2" repeats size [0]`, `size [3] "tiny"`, `size [4] "gpu-no-model": 1 GPUs`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v should contain %q", err, want)
		}
	}
}

func TestRestrict(t *testing.T) {
	sim := flatCatalog()
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
	sim := flatCatalog()
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
