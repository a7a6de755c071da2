package workflows

import (
	"sort"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
)

// gateFanoutBatch is how many gate signals the cluster has outstanding at
// once: Temporal fails a workflow task that leaves more than 2,000
// signals pending (limit.numPendingSignals), so a cluster with more pools
// tells them in batches, each waited for before the next.
const gateFanoutBatch = 500

// GateFanout is a gate change still being told to the cluster's pools:
// every pool up to and including After (in pool ID order) has heard it.
// It lives in the state, so a fan-out longer than one run continues in
// the next.
type GateFanout struct {
	After string `json:"after,omitempty"`
}

// tellPools tells every pool the new gate. Up to one batch of pools it
// sends them all at once, as always; beyond that it
// starts a batched fan-out carried in the state.
func (c *cluster) tellPools(ctx workflow.Context) {
	if len(c.state.Pools) <= gateFanoutBatch {
		c.state.Fanout = nil
		for _, id := range workflow.DeterministicKeys(c.state.Pools) {
			c.signalGate(ctx, id, c.state.Gate)
		}
		return
	}
	c.state.Fanout = &GateFanout{}
	c.continueFanout(ctx)
}

// continueFanout sends the pending fan-out's next batches, each awaited
// (a pool that is gone answers at once with not-found), until every pool
// heard the gate or the run's history is long enough to continue as new;
// the next run picks up after the last pool told.
func (c *cluster) continueFanout(ctx workflow.Context) {
	for c.state.Fanout != nil && ctx.Err() == nil && !c.historyFull(ctx) {
		batch := c.nextFanoutBatch()
		if len(batch) == 0 {
			c.state.Fanout = nil
			return
		}
		sent := make([]workflow.Future, 0, len(batch))
		for _, id := range batch {
			sent = append(sent, c.signalGate(ctx, id, c.state.Gate))
		}
		for _, f := range sent {
			_ = f.Get(ctx, nil)
		}
		c.state.Fanout.After = batch[len(batch)-1]
	}
}

// nextFanoutBatch is the next pools in ID order after the fan-out's mark.
func (c *cluster) nextFanoutBatch() []string {
	ids := workflow.DeterministicKeys(c.state.Pools)
	from := sort.SearchStrings(ids, c.state.Fanout.After)
	if from < len(ids) && ids[from] == c.state.Fanout.After {
		from++
	}
	return ids[from:min(from+gateFanoutBatch, len(ids))]
}

// historyFull says the run should continue as new.
func (c *cluster) historyFull(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxEventsPerRun
}

// signalGate pokes one pool. Fire and forget for the caller that does
// not wait: a pool that is gone simply does not hear it, and a new pool
// hears the gate when it registers. The
// pool reads the gate from this workflow rather than trusting the signal.
func (c *cluster) signalGate(ctx workflow.Context, poolID string, g contract.ClusterGate) workflow.Future {
	return workflow.SignalExternalWorkflow(ctx, poolID, "", contract.SignalClusterGate, g)
}
