package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// LeakedInstances lists the pool's machines that no group records (see
// FaultConfig.LeakRate), oldest first.
func (f *Fleet) LeakedInstances(ctx context.Context, pool types.PoolKey) ([]connectors.Instance, error) {
	defer f.enter(ctx)()
	if err := f.poolRead(ctx, "LeakedInstances", pool); err != nil {
		return nil, err
	}
	out := []connectors.Instance{}
	for _, l := range f.st.Leaked {
		if l.Pool == pool {
			out = append(out, l.Machine.instance())
		}
	}
	return out, nil
}

// DeleteInstances terminates leaked machines of the pool by ID. An ID of a
// group's machine is refused before anything changes; an unknown ID is
// already gone, which is success.
func (f *Fleet) DeleteInstances(ctx context.Context, pool types.PoolKey, ids []string, key connectors.IdempotencyKey) error {
	const op = "DeleteInstances"
	defer f.enter(ctx)()
	if err := f.checkPool(pool); err != nil {
		return f.permanent(op, err)
	}
	ids = uniqueNames(ids)
	if err := f.callFault(ctx, op); err != nil {
		return err
	}
	request := pool.WorkflowID() + " ids=" + strings.Join(ids, ",")
	if _, done, err := f.applied(op, key, request); done || err != nil {
		return err
	}
	for _, id := range ids {
		if g := f.groupOfNode(id); g != nil {
			return f.permanent(op, fmt.Errorf("instance %s belongs to group %s: it is not a leak", id, g.ID))
		}
	}
	before := len(f.st.Leaked)
	f.st.Leaked = slices.DeleteFunc(f.st.Leaked, func(l *leakedMachine) bool {
		return l.Pool == pool && slices.Contains(ids, l.Machine.ID)
	})
	if len(f.st.Leaked) != before {
		f.touch()
	}
	f.recordKey(op, key, request, "", f.cfg.Clock())
	return f.finish(ctx, op, nil)
}

// LeakedMachines counts every leaked machine of the fleet, for invariant
// checks: after garbage collection it must be zero.
func (f *Fleet) LeakedMachines() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.st.Leaked)
}
