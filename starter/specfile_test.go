package starter_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

const specHeader = `
clusters:
  - {id: east, provider: sim}
pools:
`

// A written zero is a choice; a missing field takes the HIP default.
func TestSpecFileKeepsWrittenZerosAndDefaultsTheRest(t *testing.T) {
	f, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: {maxNodes: 10, scaleUpCooldown: 0s, PendingThreshold: 0s}
  - key: {org: acme, project: web, service: batch, provider: sim, cluster: east}
`))
	require.NoError(t, err)
	d := types.DefaultPolicy()
	p := f.Pools[0].Policy
	require.Equal(t, types.Duration(0), p.ScaleUpCooldown, "written 0s cooldown replaced by the default")
	require.Equal(t, types.Duration(0), p.PendingThreshold)
	require.Equal(t, d.ScaleDownCooldown, p.ScaleDownCooldown, "missing field not defaulted")
	require.Equal(t, 10, p.MaxNodes)
	require.Equal(t, d.MinNodes, p.MinNodes)
	require.Equal(t, d, f.Pools[1].Policy, "a pool with no policy gets the HIP defaults")
}

// A bad file is refused as a whole, each error naming file, pool and field.
func TestSpecFileErrorsNameFilePoolAndField(t *testing.T) {
	_, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: {minNodes: 9, maxNodes: 3}
  - key: {org: Acme, project: web, service: api, provider: sim, cluster: east}
  - key: {org: acme, project: web, service: x, provider: sim, cluster: east}
    policy: {idleWindow: -1m}
`))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"pools.yaml: pools[0] (pool/acme/web/api/sim/east): policy.minNodes: 9 is greater than maxNodes 3",
		`pools.yaml: pools[1] (pool/Acme/web/api/sim/east): key: org "Acme" is not a lower-case DNS label`,
		"pools.yaml: pools[2] (pool/acme/web/x/sim/east): policy.idleWindow: must not be negative",
	} {
		require.True(t, strings.Contains(msg, want), "missing %q in:\n%s", want, msg)
	}
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: {cooldown: 1m}
`))
	require.ErrorContains(t, err, `unknown field "cooldown"`)
}

// A typo names its line, the pool's index and the field meant, at any
// depth and through YAML anchors and merge keys.
func TestSpecFileTyposNameLinePoolAndNearestField(t *testing.T) {
	_, err := starter.ParseSpecFile("pools.yaml", []byte(`clusters:
  - {id: east, provider: sim, regoin: us-east}
pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: &base
      maxNodes: 4
  - key: {org: acme, project: web, service: batch, provider: sim, cluster: east}
    policy:
      <<: *base
      idelWindow: 5m
    placement: {residncy: gdpr}
    demo: {shape: steady, pods: 1, requests: {milliCPU: 1, memoryByts: 1}}
  - key: {org: acme, project: web, service: etl, provider: sim, cluster: east}
    polcy: {maxNodes: 3}
    zzz: 1
`))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`pools.yaml: unknown field "regoin" in clusters[0] (line 2); did you mean "region"?`,
		`pools.yaml: unknown field "idelWindow" in pools[1].policy of pool/acme/web/batch/sim/east (line 10); did you mean "idleWindow"?`,
		`pools.yaml: unknown field "residncy" in pools[1].placement of pool/acme/web/batch/sim/east (line 11); did you mean "residency"?`,
		`pools.yaml: unknown field "memoryByts" in pools[1].demo.requests of pool/acme/web/batch/sim/east (line 12); did you mean "memoryBytes"?`,
		`pools.yaml: unknown field "polcy" in pools[2] of pool/acme/web/etl/sim/east (line 14); did you mean "policy"?`,
		`pools.yaml: unknown field "zzz" in pools[2] of pool/acme/web/etl/sim/east (line 15)` + "\n",
	} {
		require.Contains(t, msg+"\n", want)
	}
	require.NotContains(t, msg, "JSON")

	// Known fields in any case are accepted, as the JSON decoder accepts them.
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    Policy: {MaxNodes: 4}
`))
	require.NoError(t, err)

	// A type error reads as YAML, not as JSON plumbing.
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: {maxNodes: many}
`))
	require.EqualError(t, err, `pools.yaml: pools[0].policy.maxNodes of pool/acme/web/api/sim/east (line 7): "many" is not a whole number`)
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: {idleCPUThreshold: "0.3", maxNodes: 4.5}
    priceOverrides: {s-1: cheap}
`))
	require.ErrorContains(t, err, `pools.yaml: pools[0].policy.idleCPUThreshold of pool/acme/web/api/sim/east (line 7): "0.3" is not a number`)
	require.ErrorContains(t, err, `pools.yaml: pools[0].policy.maxNodes of pool/acme/web/api/sim/east (line 7): "4.5" is not a whole number`)
	require.ErrorContains(t, err, `pools.yaml: pools[0].priceOverrides.s-1 of pool/acme/web/api/sim/east (line 8): "cheap" is not a number`)
	// What the walker does not judge still reads as YAML, not JSON plumbing.
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy: {idleWindow: soon}
`))
	require.EqualError(t, err, `pools.yaml: pools[0].policy.idleWindow of pool/acme/web/api/sim/east (line 7): duration "soon": time: invalid duration "soon"`)
}

// A value the type decodes itself (a duration, a quantity) names the file,
// the line, the pool and the field, like a typo does.
func TestSpecFileValueErrorsNameFileLinePoolAndField(t *testing.T) {
	_, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+`
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
    policy:
      maxNodes: 4
      pendingThreshold: 15 seconds
`))
	require.EqualError(t, err, `pools.yaml: pools[0].policy.pendingThreshold of pool/acme/web/api/sim/east (line 9): duration "15 seconds": time: unknown unit " seconds" in duration "15 seconds"`)
}
