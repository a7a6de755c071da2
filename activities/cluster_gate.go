package activities

import (
	"context"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// ReadClusterGate reads a cluster's gate from its workflow's status: a
// pool that enforces authentication takes its gate from the cluster
// workflow itself, never from the content of a signal anyone could send.
func (a *Activities) ReadClusterGate(ctx context.Context, cluster string) (contract.ClusterGate, error) {
	resp, err := a.Temporal.QueryWorkflow(ctx, types.ClusterWorkflowID(cluster), "", contract.QueryClusterStatus)
	if err != nil {
		return contract.ClusterGate{}, err
	}
	var st contract.ClusterStatus
	if err := resp.Get(&st); err != nil {
		return contract.ClusterGate{}, err
	}
	return contract.ClusterGate{
		Phase: st.Declared.Phase, Reachable: st.Observed.Reachable, Region: st.Declared.Region,
		Tier: st.Declared.Tier, Reason: st.Frozen, Since: time.Now(),
	}, nil
}
