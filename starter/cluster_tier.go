package starter

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// SetClusterTier moves a cluster, and so every pool on it, to a billing
// tier: managed (node-hours) or byo (management-plane pool-hours). Only a
// platform administrator's credential is accepted; it returns once every
// pool on the cluster was told.
func SetClusterTier(ctx context.Context, c client.Client, cluster string, req contract.SetTierRequest) (contract.ClusterStatus, error) {
	var out contract.ClusterStatus
	var err error
	if req.Auth, err = authorize(c, types.ClusterWorkflowID(cluster), contract.UpdateSetTier, &req, &req.RequestedBy); err != nil {
		return out, err
	}
	return out, clusterUpdate(ctx, c, cluster, contract.UpdateSetTier, req, &out)
}
