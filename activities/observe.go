package activities

import (
	"context"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// ObservePool samples the pool's cluster and returns this pool's part.
// Resync runs it for the pool's safety resync and its fresh look before
// removing nodes, together with the provider read in one activity.
func (a *Activities) ObservePool(ctx context.Context, key types.PoolKey) (types.PoolObservation, error) {
	c, err := a.cluster(ctx, key.Cluster)
	if err != nil {
		return types.PoolObservation{}, err
	}
	obs, err := a.observeCluster(ctx, c)
	if err != nil {
		return types.PoolObservation{}, asTemporalError(err)
	}
	return PoolPart(obs.Pools, key, obs.ObservedAt, "resync"), nil
}

// ResyncResult is a pool's safety resync: its part of a cluster sample
// and its node groups at the provider. A failed provider read leaves View
// nil and says why; the observation still counts.
type ResyncResult struct {
	Observation types.PoolObservation `json:"observation"`
	View        *ProviderView         `json:"view,omitempty"`
	ViewErr     string                `json:"viewErr,omitempty"`
}

// Resync samples the pool and reads its node groups in one activity.
func (a *Activities) Resync(ctx context.Context, key types.PoolKey) (ResyncResult, error) {
	obs, err := a.ObservePool(ctx, key)
	if err != nil {
		return ResyncResult{}, err
	}
	res := ResyncResult{Observation: obs}
	if view, err := a.ReadProvider(ctx, key); err != nil {
		res.ViewErr = err.Error()
	} else {
		res.View = &view
	}
	return res, nil
}

// PoolPart picks one pool out of a cluster observation; a pool with no
// nodes and no pending pods is still observed, as empty.
func PoolPart(pools map[string]types.PoolObservation, key types.PoolKey, at time.Time, reason string) types.PoolObservation {
	po, ok := pools[key.WorkflowID()]
	if !ok {
		po = types.PoolObservation{Pool: key}
	}
	po.Pool, po.ObservedAt, po.Reason = key, at, reason
	// Every pending pod is counted in its shape; only each shape's oldest
	// are listed, so the observation stays small whatever is pending.
	po = po.SummarizePending(types.MaxListedPending, types.MaxPendingShapes)
	if po.Nodes == nil {
		po.Nodes = []types.NodeObservation{}
	}
	if po.PendingPods == nil {
		po.PendingPods = []types.PendingPod{}
	}
	return po
}
