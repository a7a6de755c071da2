package workflows

import "github.com/hanzoai/visor-fleet/law/lawtest"

// The law's fixtures (lawtest), which the pool's tests observe too.
var (
	t0             = lawtest.T0
	key            = lawtest.Key
	node           = lawtest.Node
	pending        = lawtest.Pending
	obs            = lawtest.Obs
	threeNodes     = lawtest.ThreeNodes
	withUpCooldown = lawtest.WithUpCooldown
)
