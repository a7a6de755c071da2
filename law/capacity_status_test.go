package law

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

func TestDescribeSaysWhatHoldsAndUntilWhen(t *testing.T) {
	p := officeHours()
	p.Headroom = headroomPolicy().Headroom
	p.MaxHourlyCost = 1
	p.Disruption = disruptionPolicy().Disruption
	s := Describe(p, utc("2026-03-23T06:55:00Z"), 12, 0.36)
	assert.Equal(t, 10, s.Bounds.MinNodes)
	assert.True(t, s.Bounds.Prescaling)
	assert.Equal(t, utc("2026-03-23T07:00:00Z"), s.NextChange.UTC())
	assert.Equal(t, 3, s.MaxDraining, "3 nodes beats 20 % of 12 (3)")
	assert.Equal(t, 4, s.HeadroomPods)
	assert.InDelta(t, 0.64, s.Budget.Room, 1e-9)
	// 06:55 UTC is 01:55 in New York: inside the allowed night.
	assert.True(t, s.ScaleDown.Allowed)
	assert.Equal(t, `bounds 10–20 (floor from capacityWindows[0] "office", pre-scaling) until 2026-03-23T07:00:00Z; headroom 4 pods; spend $0.3600 of $1.0000/h; drain ≤ 3 at once until 2026-03-23T10:00:00Z`, s.Summary(p))

	raw, err := json.Marshal(s)
	require.NoError(t, err, "no infinity or NaN reaches the status JSON")
	assert.Contains(t, string(raw), `"prescaling":true`)

	plain := types.DefaultPolicy()
	assert.Empty(t, Describe(plain, utc("2026-03-23T06:55:00Z"), 3, 0.1).Summary(plain))
}
