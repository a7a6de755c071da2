package sim

import (
	"context"
	"fmt"
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
