package digitalocean

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/sizing"
)

func TestCatalogFamilies(t *testing.T) {
	if err := sizing.CheckCatalog(Catalog()); err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]bool{}
	for _, it := range Catalog() {
		prefixes[strings.SplitN(it.Name, "-", 2)[0]] = true
	}
	for _, p := range []string{"s", "g", "c", "m", "gpu"} {
		if !prefixes[p] {
			t.Errorf("DigitalOcean catalog lacks the %s-* family", p)
		}
	}
}
