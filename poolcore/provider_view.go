package poolcore

import (
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderView is what the provider says the pool has: the truth for its
// target and for the machines still booting. The pool reads it on every
// resync and before every action that adds or removes capacity.
type ProviderView struct {
	ReadAt time.Time   `json:"readAt"`
	Groups []GroupView `json:"groups"`
	// Leaked are machines carrying the pool's identity outside all its
	// groups (a crash between launching and recording), for collection;
	// LeakErr says why they could not be listed.
	Leaked  []MachineState `json:"leaked,omitempty"`
	LeakErr string         `json:"leakErr,omitempty"`
}

// GroupView is one node group as the provider reports it.
type GroupView struct {
	ID     string `json:"id"`
	Size   string `json:"size"`
	Target int    `json:"target"`
	// CapacityType and Zone are what the group buys (empty: on demand,
	// the provider's zone).
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	Zone         string             `json:"zone,omitempty"`
	Instances    []MachineState     `json:"instances,omitempty"`
	// Ended are the group's machines the provider reports terminated
	// recently, each with EndedAt: what the meter bills them until.
	Ended []MachineState `json:"ended,omitempty"`
}

// MachineState is one machine at the provider. Name is the Kubernetes node
// name it registers as.
type MachineState struct {
	ID        string                   `json:"id"`
	Name      string                   `json:"name"`
	State     connectors.InstanceState `json:"state"`
	CreatedAt time.Time                `json:"createdAt,omitempty"`
	// EndedAt is when the provider terminated it (Ended machines only).
	EndedAt time.Time `json:"endedAt,omitzero"`
}

// Target is the pool's target summed over its groups.
func (v ProviderView) Target() int {
	total := 0
	for _, g := range v.Groups {
		total += g.Target
	}
	return total
}
