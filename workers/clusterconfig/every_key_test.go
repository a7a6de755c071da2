package clusterconfig_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

var updateGolden = flag.Bool("update-every-key", false, "rewrite testdata/every-key.golden.json from testdata/every-key.yaml")

// The clusters file format is the operators' contract: a file setting
// every key of every provider section decodes strictly, and to the same
// values as the golden file recorded, so a change to a Config struct
// (an embedded common part, a renamed field) cannot rename, drop or add
// a key unnoticed.
func TestEveryKeyDecodesAsBefore(t *testing.T) {
	f, err := clusterconfig.Load(filepath.Join("testdata", "every-key.yaml"))
	require.NoError(t, err)
	got := map[string]any{}
	for _, c := range f.Clusters {
		raw, err := json.Marshal(c.Config())
		require.NoError(t, err, c.ID)
		var section map[string]any
		require.NoError(t, json.Unmarshal(raw, &section), c.ID)
		got[c.Provider] = section
	}
	golden := filepath.Join("testdata", "every-key.golden.json")
	if *updateGolden {
		out, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(golden, append(out, '\n'), 0o644))
	}
	raw, err := os.ReadFile(golden)
	require.NoError(t, err)
	var want map[string]any
	require.NoError(t, json.Unmarshal(raw, &want))
	assert.Equal(t, want, got)
}
