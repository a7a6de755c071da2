package catalogs

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/sizing"
)

func TestDigitalOceanFamilies(t *testing.T) {
	if err := sizing.CheckCatalog(DigitalOcean()); err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]bool{}
	for _, it := range DigitalOcean() {
		prefixes[strings.SplitN(it.Name, "-", 2)[0]] = true
	}
	for _, p := range []string{"s", "g", "c", "m", "gpu"} {
		if !prefixes[p] {
			t.Errorf("DigitalOcean catalog lacks the %s-* family", p)
		}
	}
}
