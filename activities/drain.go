package activities

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// DrainInput names the node to empty.
type DrainInput struct {
	Key     types.PoolKey  `json:"key"`
	Node    string         `json:"node"`
	Timeout types.Duration `json:"timeout"`
}

// DrainNode cordons the node and evicts its pods honouring PDBs, with
// heartbeats so a crashed worker's drain is resumed elsewhere (cordon and
// evict are idempotent). It refuses a node that is not the pool's.
func (a *Activities) DrainNode(ctx context.Context, in DrainInput) (connectors.DrainResult, error) {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return connectors.DrainResult{}, err
	}
	if _, err := groupOf(ctx, c.Provider, in.Key, in.Node); err != nil {
		return connectors.DrainResult{}, asTemporalError(err)
	}
	if c.Drainer == nil {
		return connectors.DrainResult{}, asTemporalError(errclass.New(errclass.Permanent, "worker", "drain", fmt.Errorf("cluster %s has no drainer", c.ID)))
	}
	timeout := in.Timeout.D()
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	start := activity.GetInfo(ctx).ScheduledTime
	if start.IsZero() {
		start = time.Now()
	}
	res, err := c.Drainer.Drain(ctx, in.Node, connectors.DrainOptions{
		// The deadline counts from the first attempt, so retries do not
		// extend it.
		Deadline:      start.Add(timeout),
		EvictionRetry: 5 * time.Second,
		Progress:      func(p connectors.DrainProgress) { activity.RecordHeartbeat(ctx, p) },
	})
	return res, asTemporalError(err)
}

// DeleteInput names the drained node to delete at the provider.
type DeleteInput struct {
	Key            types.PoolKey             `json:"key"`
	Node           string                    `json:"node"`
	IdempotencyKey connectors.IdempotencyKey `json:"idempotencyKey"`
}

// DeleteResult reports the pool's total target afterwards.
type DeleteResult struct {
	TotalTarget int `json:"totalTarget"`
	// View is the provider's groups as read after the delete.
	View *ProviderView `json:"view,omitempty"`
}

// deleteProgress is DeleteNode's heartbeat: the provider took the delete.
type deleteProgress struct {
	Deleted bool `json:"deleted,omitempty"`
}

// DeleteNode deletes that very node, lowering its group's target so the
// provider does not replace it. A node already gone is success. It
// heartbeats, so a lost worker is retried in seconds.
func (a *Activities) DeleteNode(ctx context.Context, in DeleteInput) (DeleteResult, error) {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return DeleteResult{}, err
	}
	beats := beat[deleteProgress](ctx)
	defer beats.end()
	if !beats.get().Deleted {
		g, err := groupOf(ctx, c.Provider, in.Key, in.Node)
		switch {
		case errclass.IsNotFound(err):
			// Already deleted (a retry after a lost answer).
		case err != nil:
			return DeleteResult{}, asTemporalError(err)
		default:
			if err := c.Provider.DeleteNodes(ctx, g.ID, []string{in.Node}, in.IdempotencyKey); err != nil && !errclass.IsNotFound(err) {
				return DeleteResult{}, asTemporalError(err)
			}
		}
		beats.update(func(p *deleteProgress) { p.Deleted = true })
	}
	view, err := readView(ctx, c.Provider, in.Key)
	if err != nil {
		return DeleteResult{}, asTemporalError(err)
	}
	return DeleteResult{TotalTarget: view.Target(), View: &view}, nil
}

// groupOf finds the pool's node group holding the node, or NotFound.
func groupOf(ctx context.Context, p connectors.Provider, key types.PoolKey, node string) (connectors.NodeGroup, error) {
	groups, err := p.NodeGroups(ctx, key)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	for _, g := range groups {
		for _, inst := range g.Instances {
			// A machine that never registered is known by its ID too.
			if inst.Name == node || inst.ID == node {
				return g, nil
			}
		}
	}
	return connectors.NodeGroup{}, errclass.New(errclass.NotFound, p.Name(), "find node", fmt.Errorf("node %s is in none of pool %s's node groups", node, key.WorkflowID()))
}

// ReleaseInput asks for every node group of a pool to be deleted.
type ReleaseInput struct {
	Key            types.PoolKey             `json:"key"`
	IdempotencyKey connectors.IdempotencyKey `json:"idempotencyKey"`
}

// ReleaseResult says how much was released.
type ReleaseResult struct {
	Groups   int `json:"groups"`
	Released int `json:"released"`
}

// releaseProgress is ReleasePool's heartbeat: the groups deleted so far,
// counted, so a retry neither deletes them again nor forgets them.
type releaseProgress struct {
	ReleaseResult
	Deleted []string `json:"deleted,omitempty"`
}

// ReleasePool deletes every node group of the pool with its machines: the
// last step of deregistration, after the observed nodes were drained, so
// nothing of the pool is left running (and billed) at the provider. Group
// deletion rather than target zero, because DOKS refuses a fixed pool of
// zero nodes. Each group has its own key derived from the caller's, so a
// retry repeats exactly the deletions that did not finish; a group already
// gone is success. It ends by listing again and fails (Retryable) while a
// group still shows, so the workflow cannot complete over a leftover.
func (a *Activities) ReleasePool(ctx context.Context, in ReleaseInput) (ReleaseResult, error) {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return ReleaseResult{}, err
	}
	beats := beat[releaseProgress](ctx)
	defer beats.end()
	groups, err := c.Provider.NodeGroups(ctx, in.Key)
	if err != nil {
		return ReleaseResult{}, asTemporalError(err)
	}
	for _, g := range groups {
		if slices.Contains(beats.get().Deleted, g.ID) {
			continue // an earlier attempt deleted it; it is still shutting down
		}
		key := connectors.IdempotencyKey(string(in.IdempotencyKey) + "/" + g.ID)
		if err := c.Provider.DeleteNodeGroup(ctx, g.ID, key); err != nil && !errclass.IsNotFound(err) {
			return beats.get().ReleaseResult, asTemporalError(err)
		}
		beats.update(func(p *releaseProgress) {
			p.Deleted = append(slices.Clip(p.Deleted), g.ID)
			p.Groups++
			p.Released += max(g.TargetSize, len(g.Instances))
		})
	}
	res := beats.get().ReleaseResult
	left, err := c.Provider.NodeGroups(ctx, in.Key)
	if err != nil {
		return res, asTemporalError(err)
	}
	for _, g := range left {
		if !beingDeleted(g) {
			return res, asTemporalError(errclass.New(errclass.Retryable, c.Provider.Name(), "release pool",
				fmt.Errorf("node group %s of pool %s is still listed with target %d after its deletion", g.ID, in.Key.WorkflowID(), g.TargetSize)))
		}
	}
	return res, nil
}

// beingDeleted: a group some providers keep listing while its machines
// shut down (Hetzner servers in "deleting", an EKS nodegroup in DELETING).
func beingDeleted(g connectors.NodeGroup) bool {
	if g.TargetSize > 0 {
		return false
	}
	for _, inst := range g.Instances {
		if inst.State != connectors.InstanceDeleting {
			return false
		}
	}
	return true
}
