package clusterconfig_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

func TestClusterSpecRoundTripsItsSection(t *testing.T) {
	f := mustLoad(t, `
clusters:
  - id: fsn
    provider: hetzner
    kubeconfig: /abs/kubeconfig
    hetzner: {credentials: "env:HCLOUD", location: fsn1, image: ubuntu-24.04, retryMax: 2}
`)
	raw, err := json.Marshal(f.Clusters[0])
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"hetzner":{`)

	var back clusterconfig.ClusterSpec
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, f.Clusters[0], back)
	h, ok := back.Config().(*hetzner.Config)
	require.True(t, ok, "section decoded as %T", back.Config())
	assert.Equal(t, "fsn1", h.Location)
	assert.Equal(t, 2, h.RetryMax)
}
