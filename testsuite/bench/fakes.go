// Package bench measures the system on the embedded server: decision
// latency and the cost of idle pools. Run with `make bench`.
package bench

import (
	"context"
	"sync"
	"time"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// instantCloud answers every provider and observer call at once and
// records when provisioning started, so the benchmark measures Visor and
// Temporal, not a cloud.
type instantCloud struct {
	mu          sync.Mutex
	targets     map[string]int
	provisioned chan time.Time
}

func newInstantCloud() *instantCloud {
	return &instantCloud{targets: map[string]int{}, provisioned: make(chan time.Time, 1024)}
}

func (c *instantCloud) Cluster(_ context.Context, id string) (connectors.Cluster, error) {
	return connectors.Cluster{ID: id, Provider: c, Observer: emptyObserver{cluster: id}}, nil
}

func (c *instantCloud) Name() string { return "sim" }

func (c *instantCloud) NodeGroups(_ context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.targets[pool.WorkflowID()]; ok {
		return []connectors.NodeGroup{{ID: pool.WorkflowID(), Size: "sim-2c4g", TargetSize: t}}, nil
	}
	return nil, nil
}

func (c *instantCloud) SetTargetSize(_ context.Context, groupID string, target int, _ connectors.IdempotencyKey) error {
	c.mu.Lock()
	c.targets[groupID] = target
	c.mu.Unlock()
	c.provisioned <- time.Now()
	return nil
}

func (c *instantCloud) CreateNodeGroup(_ context.Context, spec connectors.NodeGroupSpec, _ connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	c.mu.Lock()
	c.targets[spec.Pool.WorkflowID()] = spec.TargetSize
	c.mu.Unlock()
	c.provisioned <- time.Now()
	return connectors.NodeGroup{ID: spec.Pool.WorkflowID(), Size: spec.Size, TargetSize: spec.TargetSize}, nil
}

func (c *instantCloud) DeleteNodes(context.Context, string, []string, connectors.IdempotencyKey) error {
	return nil
}

func (c *instantCloud) DeleteNodeGroup(_ context.Context, groupID string, _ connectors.IdempotencyKey) error {
	c.mu.Lock()
	delete(c.targets, groupID)
	c.mu.Unlock()
	return nil
}

func (c *instantCloud) Catalog(context.Context) ([]types.InstanceType, error) {
	return catalogs.Sim(), nil
}

type emptyObserver struct{ cluster string }

func (o emptyObserver) ObserveCluster(context.Context) (connectors.ClusterObservation, error) {
	return connectors.ClusterObservation{Cluster: o.cluster, ObservedAt: time.Now(), Pools: map[string]types.PoolObservation{}}, nil
}
