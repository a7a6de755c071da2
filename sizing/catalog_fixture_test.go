package sizing

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/hanzoai/visor-fleet/types"
)

// Catalogs belong to the connectors, which import sizing, so sizing's own
// tests plan against a snapshot in testdata/catalogs.json: the AWS and
// DigitalOcean list catalogs of 2026-11 (realistic sizes for benchmarks and
// random requests) and "flat", sizes with a flat overhead that the
// expectations below are worked out from by hand.
var fixtureCatalogs = sync.OnceValue(func() map[string][]types.InstanceType {
	b, err := os.ReadFile("testdata/catalogs.json")
	if err != nil {
		panic(err)
	}
	var m map[string][]types.InstanceType
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
})

// fixtureCatalog returns a fresh copy of a snapshot catalog.
func fixtureCatalog(name string) []types.InstanceType {
	c, ok := fixtureCatalogs()[name]
	if !ok {
		panic("no fixture catalog " + name)
	}
	return slices.Clone(c)
}

func flatCatalog() []types.InstanceType { return fixtureCatalog("flat") }

// catalogFor is the snapshot of a built-in kind's catalog ("sim" is the
// flat one).
func catalogFor(provider string) ([]types.InstanceType, error) {
	if provider == "sim" {
		provider = "flat"
	}
	c, ok := fixtureCatalogs()[provider]
	if !ok {
		return nil, fmt.Errorf("no fixture catalog %s", provider)
	}
	return slices.Clone(c), nil
}
