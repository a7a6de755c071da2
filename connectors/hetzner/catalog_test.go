package hetzner

import (
	"testing"

	"github.com/hanzoai/visor-fleet/sizing"
)

func TestCatalogFamilies(t *testing.T) {
	if err := sizing.CheckCatalog(Catalog()); err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, it := range Catalog() {
		families[it.Family] = true
	}
	if !families["cx"] || !families["cpx"] || !families["ccx"] {
		t.Errorf("Hetzner families %v", families)
	}
}
