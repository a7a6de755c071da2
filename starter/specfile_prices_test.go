package starter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

const pricedPools = `
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy:
      expireAfter: 0s
      terminationGracePeriod: 2h
      priceAdjustments:
        - {sizes: [sim-2c4g], price: 0.01}
  - key: {org: beta, project: web, service: api, provider: sim, cluster: east}
    policy:
      maxNodes: 3
priceAdjustments:
  - {org: acme, families: [sim], adjustment: "-20%"}
  - {adjustment: "+5%"}
`

// The spec file's price adjustments reach the pools of the org each
// names, after the pool's own; written lifecycle fields are kept, unwritten
// ones defaulted.
func TestSpecFilePriceAdjustmentsAndLifecycle(t *testing.T) {
	f, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+pricedPools))
	require.NoError(t, err)
	acme, beta := f.Pools[0].Policy, f.Pools[1].Policy
	require.Len(t, acme.PriceAdjustments, 3)
	assert.Equal(t, []string{"sim-2c4g"}, acme.PriceAdjustments[0].Sizes)
	assert.Equal(t, "-20%", acme.PriceAdjustments[1].Adjustment)
	assert.Empty(t, acme.PriceAdjustments[1].Org, "a copied entry keeps its org")
	assert.Equal(t, []types.PriceAdjustment{{Adjustment: "+5%"}}, beta.PriceAdjustments, "beta got acme's entry or lost the common one")
	assert.Zero(t, acme.ExpireAfter, "a written expireAfter: 0s was defaulted")
	assert.Equal(t, types.Duration(2*time.Hour), acme.TerminationGracePeriod)
	assert.Equal(t, types.Duration(types.DefaultExpireAfter), beta.ExpireAfter, "an unwritten expireAfter was not defaulted")
}

func TestSpecFilePriceAdjustmentErrorsNameTheField(t *testing.T) {
	bad := strings.NewReplacer(`adjustment: "-20%"`, `adjustment: "20%"`, `price: 0.01`, `price: 0.01, adjustment: "-1%"`).Replace(pricedPools)
	_, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+bad))
	require.Error(t, err)
	for _, want := range []string{
		`pools.yaml: priceAdjustments[0].adjustment: "20%": write a signed percent`,
		`pools.yaml: pools[0] (pool/acme/web/api/sim/east): policy.priceAdjustments[0]: give price or adjustment, not both`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}
