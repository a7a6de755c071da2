package activities

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
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

// maxViewMachines bounds what one view carries into workflow history: a
// provider answer is input like any other.
const maxViewMachines = 2 * types.MaxPolicyNodes

// maxViewEnded bounds the ended machines one group's view carries.
const maxViewEnded = 200

// Target is the pool's target summed over its groups.
func (v ProviderView) Target() int {
	total := 0
	for _, g := range v.Groups {
		total += g.Target
	}
	return total
}

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
