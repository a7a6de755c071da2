package workflows

import (
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
)

// gateFanoutBatch is how many gate signals the cluster has outstanding at
// once: Temporal fails a workflow task that leaves more than 2,000
// signals pending (limit.numPendingSignals), so a cluster with more pools
// tells them in batches, each waited for before the next.
const gateFanoutBatch = 500

// GateFanout is a gate change still being told to the cluster's pools.
// It lives in the state, so a fan-out longer than one run continues in
// the next.
type GateFanout struct {
	// After: every pool up to and including After (in pool ID order) has
	// heard it, from the run's own signals.
	After string `json:"after,omitempty"`
	// ByActivity: the FanOutGate activity tells them
	// (changeGateActivity); a run that ends before it finished leaves
	// the next run to start it again.
	ByActivity bool `json:"byActivity,omitempty"`
}

// fanoutRetryAfter is the wait before a failed FanOutGate starts again.
const fanoutRetryAfter = 30 * time.Second

// tellPools tells every pool the new gate. Up to one batch of pools it
// sends them all at once, as always; beyond that it starts a fan-out
// carried in the state: one FanOutGate activity or, in a run from before
// changeGateActivity, its own signals in batches.
func (c *cluster) tellPools(ctx workflow.Context) {
	c.stopFanout()
	if len(c.state.Pools) > gateFanoutBatch && c.gateByActivity {
		c.state.Fanout = &GateFanout{ByActivity: true}
		c.continueFanout(ctx)
		return
	}
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

// continueFanout carries the pending fan-out on: it starts FanOutGate
// when none runs (nor waits to start again), or, for a fan-out of a run
// from before changeGateActivity, sends its next batches, each awaited (a
// pool that is gone answers at once with not-found), until every pool
// heard the gate or the run's history is long enough to continue as new;
// the next run picks up after the last pool told.
func (c *cluster) continueFanout(ctx workflow.Context) {
	if f := c.state.Fanout; f != nil && f.ByActivity {
		if c.fanout == nil && c.fanoutRetry == nil && !c.closing {
			c.startFanout(ctx)
		}
		return
	}
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

// startFanout starts FanOutGate for the gate now in the state. Its retries
// are unlimited, each going on after the last pool told; the loop hears
// when it ends (awaitFanout).
func (c *cluster) startFanout(ctx workflow.Context) {
	fctx, cancel := workflow.WithCancel(ctx)
	actx := workflow.WithActivityOptions(fctx, workflow.ActivityOptions{
		Summary:             "tell the pools of cluster " + c.state.Declared.ID + " its gate",
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    activities.WatcherHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: fanoutRetryAfter},
	})
	c.fanout = workflow.ExecuteActivity(actx, a.FanOutGate, activities.GateFanoutInput{Cluster: c.state.Declared.ID, Gate: c.state.Gate})
	c.fanoutCancel = cancel
}

// stopFanout cancels a FanOutGate still running: a newer gate supersedes
// what it tells.
func (c *cluster) stopFanout() {
	if c.fanoutCancel != nil {
		c.fanoutCancel()
	}
	c.fanout, c.fanoutCancel, c.fanoutRetry = nil, nil, nil
}

// awaitFanout adds the running fan-out (or the wait before it starts
// again) to the loop's selector. A fan-out that failed past its retries
// (an hour's StartToClose) starts again after fanoutRetryAfter.
func (c *cluster) awaitFanout(ctx workflow.Context, sel workflow.Selector) {
	switch {
	case c.fanout != nil:
		f := c.fanout
		sel.AddFuture(f, func(workflow.Future) {
			if f != c.fanout {
				return // superseded
			}
			c.fanout, c.fanoutCancel = nil, nil
			if err := f.Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("gate fan-out failed; starting it again", "cluster", c.state.Declared.ID, "error", err)
				c.fanoutRetry = workflow.NewTimerWithOptions(ctx, fanoutRetryAfter, workflow.TimerOptions{Summary: "tell the pools their gate again"})
				return
			}
			c.state.Fanout = nil
		})
	case c.fanoutRetry != nil:
		sel.AddFuture(c.fanoutRetry, func(workflow.Future) { c.fanoutRetry = nil })
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
