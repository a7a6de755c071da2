package clusterconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/kwok"
)

func TestKwokSectionIsCheckedFieldByField(t *testing.T) {
	_, err := load(t, `
clusters:
  - id: kw
    provider: kwok
    kubeconfig: /etc/kube
    kwok:
      bootDelay: -1s
      namespace: Bad_NS
      catalog: [{name: tiny, milliCPU: 0, memoryBytes: 1, maxPods: 1, zones: [""]}]
`)
	require.Error(t, err)
	got := problemFields(t, err)
	for _, want := range []string{"kw/kwok.bootDelay", "kw/kwok.namespace", "kw/kwok.catalog[0]", "kw/kwok.catalog[0].zones"} {
		assert.Contains(t, got, want)
	}

	f := mustLoad(t, `
clusters:
  - id: kw
    provider: kwok
    kubeconfig: kube.yaml
    kwok: {bootDelay: 3s}
`)
	cfg, ok := f.Clusters[0].Config().(*kwok.Config)
	require.True(t, ok, "the kwok kind decodes its own section: %T", f.Clusters[0].Config())
	assert.Equal(t, "3s", cfg.BootDelay.String())
}
