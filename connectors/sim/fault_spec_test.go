package sim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

func TestFaultsFromSpecReadAsWrittenAndValidateByWrittenName(t *testing.T) {
	var s types.FaultSpec
	require.NoError(t, json.Unmarshal([]byte(`{"retryableRate":0.1,"retryAfter":"2s","neverJoinsRate":0.05,
		"goesNotReadyRate":0.05,"terminatedRate":0.02,"faultAfter":"3m","leakRate":0.01,"callLatency":"200ms",
		"callLatencyJitter":"1s","createSucceedsButErrorsRate":0.1,"insufficientCapacitySizes":["sim-8c16g"]}`), &s))
	c := FaultsFromSpec(s)
	assert.Equal(t, FaultConfig{
		RetryableRate: 0.1, RetryAfter: 2 * time.Second, NeverJoinsRate: 0.05, GoesNotReadyRate: 0.05,
		TerminatedRate: 0.02, FaultAfter: 3 * time.Minute, LeakRate: 0.01, CallLatency: 200 * time.Millisecond,
		CallLatencyJitter: time.Second, CreateSucceedsButErrorsRate: 0.1, InsufficientCapacitySizes: []string{"sim-8c16g"},
	}, c)
	assert.Empty(t, s.Problems())

	bad := types.FaultSpec{LeakRate: 2, NeverJoinsRate: 0.6, GoesNotReadyRate: 0.6, CallLatency: -1}
	fields := map[string]string{}
	for _, p := range bad.Problems() {
		fields[p.Field] = p.Message
	}
	assert.Contains(t, fields["leakRate"], "within [0, 1], got 2")
	assert.Contains(t, fields["neverJoinsRate"], "neverJoinsRate + goesNotReadyRate + terminatedRate must not exceed 1")
	assert.Contains(t, fields["callLatency"], "must not be negative")
	assert.Len(t, fields, 3)
	assert.Empty(t, types.FaultSpec{}.Problems(), "the zero spec is off and valid")
	assert.Equal(t, s, FaultsFromSpec(s).spec(), "spec and config carry the same settings")
	goNames := FaultsFromSpec(bad).problems(map[string]bool{}, false)
	assert.Equal(t, "LeakRate", goNames[0].Field, "a fleet's own config names Go fields")
}
