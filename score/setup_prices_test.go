package score

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// `visor score` prices the pool as the pool itself would: the spec
// file's org adjustments and the pool's own, after its overrides.
func TestPoolFromSpecAppliesPriceAdjustments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pools.yaml")
	spec := `
clusters:
  - {id: east, provider: sim}
pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy:
      allowedSizes: [sim-2c4g, sim-4c8g]
      priceAdjustments:
        - {sizes: [sim-4c8g], price: 0.01}
priceAdjustments:
  - {org: acme, adjustment: "-50%"}
`
	if err := os.WriteFile(path, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	_, list, err := PoolFromSpec(path, "")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]float64{}
	for _, it := range list {
		listed[it.Name] = it.HourlyPrice
	}
	if err := os.WriteFile(path, []byte(spec[:len(spec)-len("priceAdjustments:\n  - {org: acme, adjustment: \"-50%\"}\n")]), 0o600); err != nil {
		t.Fatal(err)
	}
	_, plain, err := PoolFromSpec(path, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range plain {
		want := map[string]float64{"sim-2c4g": it.HourlyPrice / 2, "sim-4c8g": 0.01}[it.Name]
		if math.Abs(listed[it.Name]-want) > 1e-9 {
			t.Errorf("%s: $%v/h, want $%v", it.Name, listed[it.Name], want)
		}
	}
}
