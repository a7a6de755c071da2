package activities

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// The provider's account of a pool's groups is the pool core's type: the
// pool keeps it in its state.
type (
	ProviderView = poolcore.ProviderView
	GroupView    = poolcore.GroupView
	MachineState = poolcore.MachineState
)

// maxViewMachines bounds what one view carries into workflow history: a
// provider answer is input like any other.
const maxViewMachines = 2 * types.MaxPolicyNodes

// maxViewEnded bounds the ended machines one group's view carries.
const maxViewEnded = 200

// ReadProvider lists the pool's node groups at the provider.
func (a *Activities) ReadProvider(ctx context.Context, key types.PoolKey) (ProviderView, error) {
	c, err := a.cluster(ctx, key.Cluster)
	if err != nil {
		return ProviderView{}, err
	}
	groups, err := c.Provider.NodeGroups(ctx, key)
	if err != nil {
		return ProviderView{}, asTemporalError(err)
	}
	v := viewOf(groups, time.Now())
	if lf, ok := c.Provider.(connectors.LeakFinder); ok {
		leaked, err := lf.LeakedInstances(ctx, key)
		if err != nil {
			// The groups are still the truth; collection waits for a read
			// that can list leaks.
			v.LeakErr = err.Error()
		}
		for _, inst := range leaked {
			if len(v.Leaked) == maxViewMachines {
				break
			}
			v.Leaked = append(v.Leaked, MachineState{ID: inst.ID, Name: inst.Name, State: inst.State, CreatedAt: inst.CreatedAt})
		}
		sort.Slice(v.Leaked, func(i, j int) bool { return v.Leaked[i].ID < v.Leaked[j].ID })
	}
	return v, nil
}

// CollectInput names leaked machines of a pool to terminate.
type CollectInput struct {
	Key            types.PoolKey             `json:"key"`
	IDs            []string                  `json:"ids"`
	IdempotencyKey connectors.IdempotencyKey `json:"idempotencyKey"`
}

// CollectLeaked terminates machines that carry the pool's identity but
// belong to none of its groups. The provider refuses any ID that is not
// such a machine, so a group member is never collected.
func (a *Activities) CollectLeaked(ctx context.Context, in CollectInput) error {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return err
	}
	lf, ok := c.Provider.(connectors.LeakFinder)
	if !ok {
		return asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), "collect leaked machines", errors.New("this provider cannot list leaked machines")))
	}
	defer beat[struct{}](ctx).end()
	return asTemporalError(lf.DeleteInstances(ctx, in.Key, in.IDs, in.IdempotencyKey))
}

// viewOf turns the provider's groups into a sorted, bounded view.
func viewOf(groups []connectors.NodeGroup, at time.Time) ProviderView {
	v := ProviderView{ReadAt: at, Groups: make([]GroupView, 0, len(groups))}
	machines := 0
	for _, g := range groups {
		gv := GroupView{ID: g.ID, Size: g.Size, Target: max(g.TargetSize, 0), Zone: g.Zone}
		if ct := g.CapacityType.Or(); ct != types.CapacityOnDemand {
			gv.CapacityType = ct
		}
		for _, inst := range g.Instances {
			if machines == maxViewMachines {
				break
			}
			machines++
			gv.Instances = append(gv.Instances, MachineState{ID: inst.ID, Name: inst.Name, State: inst.State, CreatedAt: inst.CreatedAt})
		}
		sort.Slice(gv.Instances, func(i, j int) bool { return gv.Instances[i].Name < gv.Instances[j].Name })
		// The newest ended machines are the ones a reader has not seen.
		for i := len(g.Ended) - 1; i >= 0 && len(gv.Ended) < maxViewEnded; i-- {
			inst := g.Ended[i]
			if inst.EndedAt.IsZero() {
				continue
			}
			gv.Ended = append(gv.Ended, MachineState{ID: inst.ID, Name: inst.Name, State: inst.State, CreatedAt: inst.CreatedAt, EndedAt: inst.EndedAt})
		}
		sort.Slice(gv.Ended, func(i, j int) bool { return gv.Ended[i].ID < gv.Ended[j].ID })
		v.Groups = append(v.Groups, gv)
	}
	sort.Slice(v.Groups, func(i, j int) bool { return v.Groups[i].ID < v.Groups[j].ID })
	return v
}
