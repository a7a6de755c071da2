package clusterconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

func TestSimFaultsTakeEveryModeAndNameBadFields(t *testing.T) {
	f := mustLoad(t, `
clusters:
  - id: lab
    provider: sim
    sim:
      faults: {neverJoinsRate: 0.1, goesNotReadyRate: 0.1, terminatedRate: 0.05, faultAfter: 2m, leakRate: 0.02, callLatency: 300ms, callLatencyJitter: 1s}
`)
	faults := sim.FaultsFromSpec(f.Clusters[0].Config().(*clusterconfig.SimConfig).Faults)
	assert.Equal(t, 0.1, faults.NeverJoinsRate)
	assert.Equal(t, 0.05, faults.TerminatedRate)
	assert.Equal(t, 2*time.Minute, faults.FaultAfter)
	assert.Equal(t, 0.02, faults.LeakRate)
	assert.Equal(t, 300*time.Millisecond, faults.CallLatency)

	_, err := load(t, `
clusters:
  - id: lab
    provider: sim
    sim: {faults: {neverJoinsRate: 0.7, goesNotReadyRate: 0.7, leakRate: -1, faultAfter: -1s}}
`)
	require.Error(t, err)
	got := problemFields(t, err)
	for _, want := range []string{"lab/sim.faults.neverJoinsRate", "lab/sim.faults.leakRate", "lab/sim.faults.faultAfter"} {
		assert.Contains(t, got, want)
	}
}
