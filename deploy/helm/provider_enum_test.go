package helm

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	_ "github.com/hanzoai/visor-fleet/workers/clusterconfig" // registers the built-in kinds
)

// The chart's schema accepts exactly the provider kinds a worker knows:
// a kind added to the registry and not to the schema would be refused by
// helm install, one in the schema and not the registry by the worker.
func TestSchemaProviderEnumIsTheRegistrysKinds(t *testing.T) {
	raw, err := os.ReadFile("visor-fleet/values.schema.json")
	require.NoError(t, err)
	var schema struct {
		Definitions struct {
			Cluster struct {
				Properties struct {
					Provider struct {
						Enum []string `json:"enum"`
					} `json:"provider"`
				} `json:"properties"`
			} `json:"cluster"`
		} `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(raw, &schema))
	enum := slices.Sorted(slices.Values(schema.Definitions.Cluster.Properties.Provider.Enum))
	require.NotEmpty(t, enum, "values.schema.json: definitions.cluster.properties.provider.enum is missing")
	kinds := slices.Sorted(slices.Values(connectors.KindNames()))
	require.Equal(t, kinds, enum, "values.schema.json's provider enum (right) is not the registry's kinds (left)")
}
