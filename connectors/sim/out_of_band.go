package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// TerminateOutOfBand terminates a group's machine as someone outside Visor
// would (a console click, a spot reclaim). Like an ASG, the group keeps
// its target, so the next Step launches a replacement.
func (f *Fleet) TerminateOutOfBand(instanceID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.groupOfNode(instanceID)
	if g == nil {
		return fmt.Errorf("sim: no group has instance %q", instanceID)
	}
	return f.removeMachine(context.Background(), g, g.machineIndex(instanceID))
}

// DeleteGroupOutOfBand deletes a group and its machines behind Visor's back.
func (f *Fleet) DeleteGroupOutOfBand(groupID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.st.Groups[groupID]
	if g == nil {
		return fmt.Errorf("sim: no group %q", groupID)
	}
	var err error
	for len(g.Machines) > 0 && err == nil {
		err = f.removeMachine(context.Background(), g, len(g.Machines)-1)
	}
	delete(f.st.Groups, groupID)
	f.touch()
	return err
}

// Inventory is the fleet's cloud side as ground truth, for invariant
// checks (chaos runs, tests): every group with its pool, and every leak.
type Inventory struct {
	Groups []PoolGroup    `json:"groups"`
	Leaked []PoolInstance `json:"leaked"`
	// Ended are the group machines that ended, oldest first, each with
	// CreatedAt and EndedAt: with the groups' live machines, every
	// machine-second the provider ran. The sim keeps the newest ones
	// only; EndedFrom is the end time of the newest it dropped (zero:
	// none), so the record is complete for machines ended after it.
	Ended     []PoolInstance `json:"ended"`
	EndedFrom time.Time      `json:"endedFrom,omitzero"`
	// Notices are the interruption notices sent, each with its pool;
	// Refusals the launches refused for want of capacity, oldest first.
	Notices  []PoolNotice      `json:"notices"`
	Refusals []CapacityRefusal `json:"refusals"`
}

// PoolNotice is one interruption notice and the pool it was sent for.
type PoolNotice struct {
	Pool   types.PoolKey           `json:"pool"`
	Notice connectors.Interruption `json:"notice"`
	// Acked: the pool acknowledged it.
	Acked bool `json:"acked,omitempty"`
}

// PoolGroup is one group and the pool it belongs to.
type PoolGroup struct {
	Pool  types.PoolKey        `json:"pool"`
	Group connectors.NodeGroup `json:"group"`
}

// PoolInstance is one leaked machine and the pool it is tagged for.
type PoolInstance struct {
	Pool     types.PoolKey       `json:"pool"`
	Size     string              `json:"size"`
	GroupID  string              `json:"groupID,omitempty"` // ended group machines only
	Instance connectors.Instance `json:"instance"`
}

// Inventory lists every group and leaked machine, in ID order, without
// faults or latency: it is the truth a test checks against, not a call.
// A fleet opened on a state file (New with StatePath) reports what a
// killed process left on disk.
func (f *Fleet) Inventory() Inventory {
	f.mu.Lock()
	defer f.mu.Unlock()
	inv := Inventory{Groups: []PoolGroup{}, Leaked: []PoolInstance{}}
	for _, g := range f.sortedGroups() {
		inv.Groups = append(inv.Groups, PoolGroup{Pool: g.Pool, Group: g.view()})
	}
	for _, l := range f.st.Leaked {
		inv.Leaked = append(inv.Leaked, PoolInstance{Pool: l.Pool, Size: l.Size, Instance: l.Machine.instance()})
	}
	inv.Ended, inv.EndedFrom = make([]PoolInstance, 0, len(f.st.History)), f.st.HistoryFrom
	for _, e := range f.st.History {
		inst := e.Machine.instance()
		inst.EndedAt = e.EndedAt
		inv.Ended = append(inv.Ended, PoolInstance{Pool: e.Pool, Size: e.Size, GroupID: e.GroupID, Instance: inst})
	}
	inv.Notices = make([]PoolNotice, 0, len(f.st.Notices))
	for _, n := range f.st.Notices {
		inv.Notices = append(inv.Notices, PoolNotice{Pool: n.Pool, Notice: n.interruption(), Acked: !n.Acked.IsZero()})
	}
	inv.Refusals = append([]CapacityRefusal{}, f.st.Refusals...)
	return inv
}
