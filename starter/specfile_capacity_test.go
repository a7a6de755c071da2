package starter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/examples"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

const capacityPools = `
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy:
      minNodes: 1
      maxNodes: 10
      provisioningDelay: 3m
      capacityWindows:
        - {name: office, schedule: "0 8 * * 1-5", timeZone: Europe/Berlin, duration: 11h, minNodes: 4}
      headroom:
        - {name: burst, pods: 2, requests: {milliCPU: 500, memoryBytes: 1073741824}}
      maxHourlyCost: 0.5
      disruption:
        maxDrainingNodes: 1
        windows:
          - {schedule: "0 20 * * *", timeZone: Europe/Berlin, duration: 10h, scaleDown: allowed}
orgs:
  - {org: acme, maxNodes: 20, maxNodesPerCluster: 12, maxHourlyCost: 3}
`

func TestSpecFileReadsCapacityPoliciesAndOrgs(t *testing.T) {
	f, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+capacityPools))
	require.NoError(t, err)
	p := f.Pools[0].Policy
	require.Len(t, p.CapacityWindows, 1)
	assert.Equal(t, types.Duration(11*time.Hour), p.CapacityWindows[0].Duration)
	assert.Equal(t, 3*time.Minute, p.EffectiveProvisioningDelay())
	assert.Equal(t, 2, p.Headroom[0].Pods)
	assert.Equal(t, 0.5, p.MaxHourlyCost)
	assert.Equal(t, types.ScaleDownAllowed, p.Disruption.Windows[0].ScaleDown)
	assert.Equal(t, []types.OrgPolicy{{Org: "acme", MaxNodes: 20, MaxNodesPerCluster: 12, MaxHourlyCost: 3}}, f.Orgs)
}

func TestSpecFileCapacityErrorsNameFilePoolAndField(t *testing.T) {
	bad := strings.NewReplacer(
		`timeZone: Europe/Berlin, duration: 11h`, `timeZone: Europe/Berln, duration: 11h`,
		`"0 20 * * *"`, `"0 20 * *"`,
		`maxNodesPerCluster: 12`, `maxNodesPerCluster: 30`,
	).Replace(capacityPools) + "  - {org: acme, maxNodes: 1}\n"
	_, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+bad))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`pools.yaml: pools[0] (pool/acme/web/api/sim/east): policy.capacityWindows[0].timeZone "Europe/Berln": not a zone in the time zone database`,
		`policy.disruption.windows[0].schedule "0 20 * *": expected exactly 5 fields`,
		`pools.yaml: orgs[0] (acme): maxNodesPerCluster: 30 is greater than maxNodes 20`,
		`pools.yaml: orgs[1]: org acme is also orgs[0]`,
	} {
		assert.Contains(t, msg, want)
	}
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+strings.Replace(capacityPools, "minNodes: 4}", "minNodes: 4, maxNodez: 5}", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "maxNodez" in pools[0].policy.capacityWindows[0]`)
}

// The bundled demo exercises every capacity policy, and its other pools
// stay as they were (no capacity policy).
func TestExampleExercisesEveryCapacityPolicy(t *testing.T) {
	f, err := starter.ParseSpecFile("examples/pools.yaml", examples.Pools)
	require.NoError(t, err)
	var windows, headroom, budget, disruption, plain int
	for _, e := range f.Pools {
		p := e.Policy
		windows += len(p.CapacityWindows)
		headroom += len(p.Headroom)
		if p.MaxHourlyCost > 0 {
			budget++
		}
		if p.Disruption != nil && len(p.Disruption.Windows) > 0 && p.Disruption.MaxDrainingNodes > 0 {
			disruption++
		}
		if len(p.CapacityWindows) == 0 && len(p.Headroom) == 0 && p.MaxHourlyCost == 0 && p.Disruption == nil {
			plain++
		}
	}
	assert.Positive(t, windows)
	assert.Positive(t, headroom)
	assert.Positive(t, budget)
	assert.Positive(t, disruption)
	assert.GreaterOrEqual(t, plain, 3, "the original demo pools keep their policies")
	require.Len(t, f.Orgs, 2)
	assert.Equal(t, 12, f.Orgs[0].MaxNodesPerCluster)
}
