package clusterconfig_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

// Every built-in kind's catalog comes through the registry, is one the
// planner can use, and is a fresh copy each time (editing one must not
// leak into the next plan). The self-hosted kinds' sizes (vSphere,
// Proxmox, KVM) come from their configuration.
func TestBuiltinCatalogsAreSane(t *testing.T) {
	for _, name := range clusterconfig.Providers {
		t.Run(name, func(t *testing.T) {
			catalog, err := connectors.CatalogOf(name)
			if k, _ := connectors.LookupKind(name); k.Catalog == nil {
				require.ErrorContains(t, err, "configuration")
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, catalog)
			require.NoError(t, sizing.CheckCatalog(catalog))
			for _, it := range catalog {
				a := it.Allocatable()
				assert.True(t, it.HourlyPrice > 0 && it.PriceDate != "", "%s: price %v dated %q", it.Name, it.HourlyPrice, it.PriceDate)
				// Overhead is real but never most of a node.
				assert.True(t, a.MilliCPU > 0 && a.Memory > 0 && a.Pods > 0, "%s: allocatable %s", it.Name, a)
				assert.True(t, it.Overhead.MilliCPU > 0 && it.Overhead.Memory > 0 && it.Overhead.MilliCPU*2 <= it.MilliCPU && it.Overhead.Memory*2 <= it.Memory,
					"%s: overhead %s", it.Name, it.Overhead)
			}
			catalog[0].HourlyPrice = 999
			again, err := connectors.CatalogOf(name)
			require.NoError(t, err)
			assert.NotEqual(t, 999.0, again[0].HourlyPrice, "catalog shares its backing array between calls")
		})
	}
}

// sizing's own tests plan against a snapshot of the built-in catalogs
// (sizing cannot import the connectors that own them). The snapshot must
// be the catalogs as they are: regenerate it with
// VISOR_UPDATE_CATALOG_FIXTURE=1 go test -run SizingFixture ./workers/clusterconfig/
func TestSizingFixtureIsTheConnectorsCatalogs(t *testing.T) {
	path := filepath.Join("..", "..", "sizing", "testdata", "catalogs.json")
	want := map[string][]types.InstanceType{}
	for fixture, kind := range map[string]string{"aws": clusterconfig.AWS, "digitalocean": clusterconfig.DigitalOcean, "hetzner": clusterconfig.Hetzner, "flat": clusterconfig.Sim} {
		c, err := connectors.CatalogOf(kind)
		require.NoError(t, err)
		want[fixture] = c
	}
	if os.Getenv("VISOR_UPDATE_CATALOG_FIXTURE") == "1" {
		b, err := json.MarshalIndent(want, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var got map[string][]types.InstanceType
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, want, got, "sizing/testdata/catalogs.json is stale: regenerate it (see this test's comment)")
}
