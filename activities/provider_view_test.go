package activities

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
)

// The view carries each group's ended machines with their end, the
// newest maxViewEnded of them, sorted; one without an end is not one.
func TestViewCarriesEndedMachinesBounded(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	g := connectors.NodeGroup{ID: "g1", Size: "s", TargetSize: 1,
		Instances: []connectors.Instance{{ID: "i-live", Name: "live", CreatedAt: t0}},
		Ended:     []connectors.Instance{{ID: "i-noend", CreatedAt: t0}}}
	for i := range maxViewEnded + 3 {
		g.Ended = append(g.Ended, connectors.Instance{ID: fmt.Sprintf("i-%04d", i), CreatedAt: t0, EndedAt: t0.Add(time.Duration(i+1) * time.Second)})
	}
	v := viewOf([]connectors.NodeGroup{g}, t0.Add(time.Hour))
	require.Len(t, v.Groups, 1)
	ended := v.Groups[0].Ended
	require.Len(t, ended, maxViewEnded)
	assert.Equal(t, "i-0003", ended[0].ID, "the oldest three are left out")
	assert.Equal(t, t0.Add(4*time.Second), ended[0].EndedAt)
	for _, m := range ended {
		assert.NotEqual(t, "i-noend", m.ID)
	}
	assert.Len(t, v.Groups[0].Instances, 1)
}
