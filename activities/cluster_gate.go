package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/hanzoai/visor-fleet/connectors/errclass"

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

// GateFanoutInput names the cluster whose pools hear Gate.
type GateFanoutInput struct {
	Cluster string               `json:"cluster"`
	Gate    contract.ClusterGate `json:"gate"`
}

// gateFanoutWidth is how many gate signals the fan-out has in flight.
const gateFanoutWidth = 16

// FanOutGate tells every pool the cluster carries its new gate, in pool
// ID order, keeping the last pool told as heartbeat progress so a retry
// goes on from there. A large cluster's fan-out is this one activity, not
// two history events per pool in the cluster workflow: 10,000 pools made
// the cluster continue as new five times per gate change. A pool that is
// gone is skipped; a pool that enforces authentication reads the gate
// from the cluster workflow rather than trusting this signal.
func (a *Activities) FanOutGate(ctx context.Context, in GateFanoutInput) (int, error) {
	if a.Temporal == nil {
		return 0, asTemporalError(errclass.New(errclass.Permanent, "worker", "gate fan-out", errors.New("the fan-out needs a Temporal client")))
	}
	pools, err := a.registeredPools(ctx, in.Cluster)
	if err != nil {
		return 0, fmt.Errorf("list the pools of cluster %s: %w", in.Cluster, err)
	}
	ids := make([]string, 0, len(pools))
	for id := range pools {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	told := beat[string](ctx)
	defer told.end()
	from := sort.SearchStrings(ids, told.get())
	if from < len(ids) && ids[from] == told.get() {
		from++
	}
	sent := 0
	for start := from; start < len(ids); start += gateFanoutWidth {
		batch := ids[start:min(start+gateFanoutWidth, len(ids))]
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for i, id := range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = a.Temporal.SignalWorkflow(ctx, id, "", contract.SignalClusterGate, in.Gate)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			var notFound *serviceerror.NotFound
			switch {
			case err == nil:
				sent++
			case errors.As(err, &notFound): // the pool left
			default:
				return sent, fmt.Errorf("tell pool %s the gate of cluster %s: %w", batch[i], in.Cluster, err)
			}
		}
		told.update(func(last *string) { *last = batch[len(batch)-1] })
	}
	return sent, nil
}
