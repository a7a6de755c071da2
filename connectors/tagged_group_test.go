package connectors_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hanzoai/visor-fleet/connectors"
)

func TestPlanTargetRemovesTheNewestAndCountsTheKeysOwnMachines(t *testing.T) {
	live := []string{"a-old", "b-old", "k-1"} // oldest first; k- made by the key
	byKey := func(m string) bool { return m[0] == 'k' }

	remove, create := connectors.PlanTarget(live, 1, byKey)
	assert.Equal(t, []string{"k-1", "b-old"}, remove, "newest first")
	assert.Zero(t, create)

	remove, create = connectors.PlanTarget(live, 3, byKey)
	assert.Empty(t, remove)
	assert.Zero(t, create, "already at target")

	remove, create = connectors.PlanTarget(live, 5, byKey)
	assert.Empty(t, remove)
	assert.Equal(t, 3, create, "the key owns three of five: the one it made and two more")

	assert.Equal(t, map[string]string{"team": "shop"}, connectors.TenantTags(map[string]string{"team": "shop", "visor-pool": "p"}, "visor-"))
}
