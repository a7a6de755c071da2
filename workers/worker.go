// Package workers wires a Temporal worker: the pool and cluster workflows
// and the activities, on a task queue. Kept thin on purpose.
package workers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/workflows"
)

// New returns a worker serving the workflows and activities on taskQueue.
func New(c client.Client, taskQueue string, acts *activities.Activities, opts worker.Options) worker.Worker {
	if taskQueue == "" {
		taskQueue = contract.DefaultTaskQueue
	}
	if opts.DeadlockDetectionTimeout == 0 {
		opts.DeadlockDetectionTimeout = DeadlockDetectionTimeout
	}
	opts.Interceptors = append(opts.Interceptors, &providerErrorCounter{})
	if opts.Identity == "" {
		opts.Identity = Identity()
	}
	w := worker.New(c, taskQueue, opts)
	Register(w, acts)
	return w
}

// DeadlockDetectionTimeout is how long workflow code may run between
// yields before the SDK fails the task (its default is 1 s of wall time).
// A pool of a thousand nodes in a burst folds an observation of hundreds
// of kilobytes per signal, several per task; on a loaded worker that
// crossed a second of wall time, and each retry of the failed task did
// the same work again, so the pool stopped deciding.
const DeadlockDetectionTimeout = 10 * time.Second

// Register puts the workflows and activities on any registry (a worker or
// a test environment).
func Register(r worker.Registry, acts *activities.Activities) {
	// Update validators check callers against this worker's trust.
	workflows.UseTrust(acts.TrustKeys)
	r.RegisterWorkflowWithOptions(workflows.PoolWorkflow, workflow.RegisterOptions{Name: contract.PoolWorkflow})
	r.RegisterWorkflowWithOptions(workflows.ClusterWorkflow, workflow.RegisterOptions{Name: contract.ClusterWorkflow})
	r.RegisterActivity(acts)
}

// StaticClusters is a fixed set of clusters a worker can reach.
type StaticClusters map[string]connectors.Cluster

// Cluster implements activities.ClusterSource.
func (s StaticClusters) Cluster(_ context.Context, id string) (connectors.Cluster, error) {
	if c, ok := s[id]; ok {
		return c, nil
	}
	known := make([]string, 0, len(s))
	for k := range s {
		known = append(known, k)
	}
	sort.Strings(known)
	return connectors.Cluster{}, errclass.New(errclass.Permanent, "worker", "resolve cluster",
		fmt.Errorf("cluster %q is not configured on this worker (it knows: %s)", id, strings.Join(known, ", ")))
}
