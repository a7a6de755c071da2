package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/types"
)

// The policy's price adjustments reach every plan, so the planner buys,
// and the pool budgets and publishes, at the adjusted prices.
func TestPoolPlansWithThePolicysPriceAdjustments(t *testing.T) {
	p := types.DefaultPolicy()
	p.PriceAdjustments = []types.PriceAdjustment{{Families: []string{"sim"}, Adjustment: "-25%"}}
	env, w := newTestPool(t, p, busyNodes())
	runWithOneOverduePod(t, env, w, spec(p), 5*time.Minute)
	w.mu.Lock()
	defer w.mu.Unlock()
	require.NotEmpty(t, w.plans)
	require.Equal(t, p.PriceAdjustments, w.plans[0].PriceAdjustments)
}
