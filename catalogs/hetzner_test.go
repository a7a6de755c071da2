package catalogs

import (
	"testing"

	"github.com/hanzoai/visor-fleet/sizing"
)

func TestHetznerFamilies(t *testing.T) {
	if err := sizing.CheckCatalog(Hetzner()); err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, it := range Hetzner() {
		families[it.Family] = true
	}
	if !families["cx"] || !families["cpx"] || !families["ccx"] {
		t.Errorf("Hetzner families %v", families)
	}
}
