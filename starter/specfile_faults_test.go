package starter_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/examples"
	"github.com/hanzoai/visor-fleet/starter"
)

const faultsPools = `
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
`

func TestSpecFileFaultsSectionIsReadPerSimCluster(t *testing.T) {
	f, err := starter.ParseSpecFile("pools.yaml", []byte(specHeader+faultsPools+`
faults:
  east: {seed: 7, retryableRate: 0.1, createSucceedsButErrorsRate: 0.1, insufficientCapacitySizes: [sim-8c16g], neverJoinsRate: 0.05, goesNotReadyRate: 0.05, callLatency: 250ms}
`))
	require.NoError(t, err)
	east := f.Faults["east"]
	assert.Equal(t, int64(7), east.Seed)
	c := east.FaultSpec
	assert.Equal(t, 0.1, c.RetryableRate)
	assert.Equal(t, 0.05, c.NeverJoinsRate)
	assert.Equal(t, 250*time.Millisecond, c.CallLatency.D())
	assert.Equal(t, []string{"sim-8c16g"}, c.InsufficientCapacitySizes)

	f, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+faultsPools))
	require.NoError(t, err)
	assert.Empty(t, f.Faults, "off by default")
}

func TestSpecFileFaultsErrorsNameClusterAndField(t *testing.T) {
	_, err := starter.ParseSpecFile("pools.yaml", []byte(`
clusters:
  - {id: east, provider: sim}
  - {id: do-1, provider: digitalocean}
pools:
`+faultsPools+`
faults:
  east: {leakRate: 1.5, terminatedRate: -0.1, faultAfter: -1s}
  do-1: {retryableRate: 0.1}
  nowhere: {retryableRate: 0.1}
`))
	require.Error(t, err)
	for _, want := range []string{
		"pools.yaml: faults.east.leakRate: must be within [0, 1], got 1.5",
		"faults.east.terminatedRate",
		"faults.east.faultAfter: must not be negative",
		"faults.do-1: cluster do-1 has provider \"digitalocean\"",
		"faults.nowhere: no cluster \"nowhere\" is declared",
	} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = starter.ParseSpecFile("pools.yaml", []byte(specHeader+faultsPools+`
faults:
  east: {neverJoinRate: 0.1}
`))
	require.Error(t, err, "a misspelt field is refused, not ignored")
	assert.Contains(t, err.Error(), "neverJoinRate")
}

// The commented example in examples/pools.yaml is off as shipped and a
// valid faults section once uncommented, so the docs cannot rot.
func TestExampleFaultsAreOffAndValidWhenUncommented(t *testing.T) {
	shipped, err := starter.ParseSpecFile("examples/pools.yaml", examples.Pools)
	require.NoError(t, err)
	assert.Empty(t, shipped.Faults)

	lines := strings.Split(string(examples.Pools), "\n")
	start := slices.Index(lines, "# faults:")
	require.Positive(t, start, "the example keeps its commented faults section")
	for i := start; i < len(lines); i++ {
		lines[i] = strings.TrimPrefix(strings.TrimPrefix(lines[i], "#"), " ")
	}
	on, err := starter.ParseSpecFile("examples/pools.yaml", []byte(strings.Join(lines, "\n")))
	require.NoError(t, err)
	east := on.Faults["sim-east"].FaultSpec
	assert.Equal(t, 0.05, east.NeverJoinsRate)
	assert.Equal(t, 0.02, east.LeakRate)
	assert.Equal(t, 500*time.Millisecond, east.CallLatency.D())
}
