package workflows

import "github.com/hanzoai/visor-fleet/poolcore"

// PoolState is the pool's durable state, kept and changed by the pure
// pool core (poolcore); the workflow only feeds it.
type PoolState = poolcore.State
