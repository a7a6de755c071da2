package activities

import (
	"context"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// ObservePool samples the pool's cluster and returns this pool's part: the
// pool's own safety resync and its fresh look before removing nodes.
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

// PoolPart picks one pool out of a cluster observation; a pool with no
// nodes and no pending pods is still observed, as empty.
func PoolPart(pools map[string]types.PoolObservation, key types.PoolKey, at time.Time, reason string) types.PoolObservation {
	po, ok := pools[key.WorkflowID()]
	if !ok {
		po = types.PoolObservation{Pool: key}
	}
	po.Pool, po.ObservedAt, po.Reason = key, at, reason
	if po.Nodes == nil {
		po.Nodes = []types.NodeObservation{}
	}
	if po.PendingPods == nil {
		po.PendingPods = []types.PendingPod{}
	}
	return po
}
