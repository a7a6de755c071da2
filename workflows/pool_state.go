package workflows

import (
	"github.com/hanzoai/visor-fleet/contract"
)

// PoolInput starts or continues a pool workflow. State is nil on first
// start and carried whole through Continue-As-New.
type PoolInput struct {
	Spec  contract.PoolSpec `json:"spec"`
	State *PoolState        `json:"state,omitempty"`
}
