package starter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// ApplyRules are what the platform declares that a spec file cannot: the
// provider task queues that have workers behind them.
type ApplyRules struct {
	// ProviderQueues are the task queues a pool may name as
	// providerTaskQueue, besides the default queue (always allowed). A
	// queue nobody declared has no worker, so the pool would never act.
	ProviderQueues []string
}

// queueAllowed reports whether q may be a pool's providerTaskQueue.
func (r ApplyRules) queueAllowed(q string) bool {
	return q == "" || q == contract.DefaultTaskQueue || slices.Contains(r.ProviderQueues, q)
}

// CheckApply validates every pool of a spec file against the platform
// before anything is started: each cluster is enrolled and asked for its
// status once, and every pool's placement, provider and task queue is
// checked against it. The error names file, pool index and field of every
// problem; nil means the whole file may be applied.
func CheckApply(ctx context.Context, c client.Client, path string, pools []PoolEntry, rules ApplyRules) error {
	clusters := map[string]clusterView{}
	var errs []error
	for i, e := range pools {
		where := fmt.Sprintf("%s: pools[%d] (%s)", path, i, e.Key.WorkflowID())
		if err := e.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		if err := e.CheckProviderQueue(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		} else if !rules.queueAllowed(e.ProviderTaskQueue) {
			errs = append(errs, fmt.Errorf("%s: providerTaskQueue %q is not a declared provider queue (declared: %s; declare it with --provider-queues or VISOR_PROVIDER_QUEUES)",
				where, e.ProviderTaskQueue, declaredList(rules.ProviderQueues)))
		}
		view, seen := clusters[e.Key.Cluster]
		if !seen {
			view = lookUpCluster(ctx, c, e.Key.Cluster)
			clusters[e.Key.Cluster] = view
		}
		if err := view.fits(e.PoolSpec); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	return errors.Join(errs...)
}

// clusterView is what one cluster lookup found: its status, or why there
// is none.
type clusterView struct {
	id     string
	status contract.ClusterStatus
	err    error
}

func lookUpCluster(ctx context.Context, c client.Client, id string) clusterView {
	v := clusterView{id: id}
	running, err := isRunning(ctx, c, types.ClusterWorkflowID(id))
	switch {
	case err != nil:
		v.err = fmt.Errorf("key.cluster: %w", err)
	case !running:
		v.err = fmt.Errorf("key.cluster: cluster %s is not enrolled; enroll it first (visor cluster enroll %s)", id, id)
	default:
		if v.status, err = ClusterStatus(ctx, c, id); err != nil {
			v.err = fmt.Errorf("key.cluster: status of cluster %s: %w", id, err)
		}
	}
	return v
}

// fits checks one pool against the cluster it names.
func (v clusterView) fits(spec contract.PoolSpec) error {
	if v.err != nil {
		return v.err
	}
	var errs []error
	if d := v.status.Declared; d.Provider != "" && d.Provider != spec.Key.Provider {
		errs = append(errs, fmt.Errorf("key.provider: the pool is on provider %s but cluster %s is on %s", spec.Key.Provider, d.ID, d.Provider))
	}
	if !placementEmpty(spec.Placement) {
		if err := PlacementMismatch(spec.Placement, v.status); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func declaredList(qs []string) string {
	all := append([]string{contract.DefaultTaskQueue + " (default)"}, qs...)
	return strings.Join(all, ", ")
}
