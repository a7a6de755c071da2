package workflows

import (
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// PoolInput starts or continues a pool workflow. State is nil on first
// start and carried whole through Continue-As-New.
type PoolInput struct {
	Spec  contract.PoolSpec `json:"spec"`
	State *PoolState        `json:"state,omitempty"`
}

// PoolState is the pool's durable state, kept and changed by the pure
// pool core (poolcore); the workflow only feeds it.
type PoolState = poolcore.State
