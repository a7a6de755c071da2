package clusterconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInformersAreLoadedForRealClustersAndRefusedForTheSim(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: lab
    provider: sim
    informers: true
`)
	require.Error(t, err)
	assert.Contains(t, problemFields(t, err)["lab/informers"], "observed by lists only")

	f := mustLoad(t, `
clusters:
  - id: do-ams3
    provider: digitalocean
    informers: true
    digitalocean: {credentials: "env:DO_TOKEN", clusterID: x}
`)
	assert.True(t, f.Clusters[0].Informers)
}
