package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// ClusterInput starts or continues a cluster workflow.
type ClusterInput struct {
	Declared contract.ClusterDeclared `json:"declared"`
	// TokenHash is the SHA-256 of the enrollment token; the token itself
	// never enters history.
	TokenHash string        `json:"tokenHash,omitempty"`
	State     *ClusterState `json:"state,omitempty"`
}

// ClusterState is the cluster workflow's durable state.
type ClusterState struct {
	Declared     contract.ClusterDeclared           `json:"declared"`
	Observed     contract.ClusterObserved           `json:"observed"`
	Pools        map[string]contract.PoolThresholds `json:"pools"`
	TokenHash    string                             `json:"tokenHash,omitempty"`
	GateSince    time.Time                          `json:"gateSince"`
	LastRejected string                             `json:"lastRejected,omitempty"`
}

type cluster struct {
	state    *ClusterState
	report   workflow.ReceiveChannel
	register workflow.ReceiveChannel
	leave    workflow.ReceiveChannel
	wake     workflow.Channel
	// gateDirty: the pools must hear the new gate.
	gateDirty bool
}

// ClusterWorkflow carries one enrolled cluster: its declared and observed
// halves, the watcher that samples it, and the gate its pools obey.
func ClusterWorkflow(ctx workflow.Context, in ClusterInput) error {
	if err := in.Declared.Validate(); err != nil {
		return fmt.Errorf("invalid cluster: %w", err)
	}
	c := &cluster{
		state:    in.State,
		report:   workflow.GetSignalChannel(ctx, contract.SignalWatcherReport),
		register: workflow.GetSignalChannel(ctx, contract.SignalPoolRegistered),
		leave:    workflow.GetSignalChannel(ctx, contract.SignalPoolDeregistered),
		wake:     workflow.NewBufferedChannel(ctx, 16),
	}
	if c.state == nil {
		c.state = &ClusterState{Declared: in.Declared, TokenHash: in.TokenHash, Pools: map[string]contract.PoolThresholds{}}
		c.state.Observed.SyncState = contract.SyncDisconnected
		c.state.GateSince = workflow.Now(ctx)
	}
	if c.state.Pools == nil {
		c.state.Pools = map[string]contract.PoolThresholds{}
	}
	if err := c.registerHandlers(ctx); err != nil {
		return err
	}
	return c.run(ctx)
}

func (c *cluster) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, contract.QueryClusterStatus, func() (contract.ClusterStatus, error) {
		return c.status(workflow.Now(ctx)), nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateSetPhase,
		func(ctx workflow.Context, req contract.SetPhaseRequest) (contract.ClusterStatus, error) {
			c.state.Declared.Phase = req.Phase
			c.gateDirty = true
			c.wake.SendAsync(true)
			return c.status(workflow.Now(ctx)), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(req contract.SetPhaseRequest) error {
			if !req.Phase.Valid() {
				return fmt.Errorf("phase %q is not one of pending, active, draining, disabled", req.Phase)
			}
			if req.Reason == "" {
				return errors.New("reason is empty: say why the phase changes")
			}
			return nil
		}})
}

func (c *cluster) run(ctx workflow.Context) error {
	watchCtx, stopWatch := workflow.WithCancel(ctx)
	watch := c.startWatcher(watchCtx)
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(c.report, func(ch workflow.ReceiveChannel, _ bool) {
			var r contract.WatcherReport
			ch.Receive(ctx, &r)
			c.applyReport(r)
		})
		sel.AddReceive(c.register, func(ch workflow.ReceiveChannel, _ bool) {
			var r contract.PoolRegistration
			ch.Receive(ctx, &r)
			c.applyRegistration(ctx, r)
		})
		sel.AddReceive(c.leave, func(ch workflow.ReceiveChannel, _ bool) {
			var r contract.PoolRegistration
			ch.Receive(ctx, &r)
			delete(c.state.Pools, r.PoolID)
		})
		sel.AddReceive(c.wake, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
		sel.AddFuture(watch, func(f workflow.Future) {
			// The watcher only ends by failing past its retries: count the
			// cluster unreachable and start it again.
			err := f.Get(ctx, nil)
			c.state.Observed.LastError = fmt.Sprint(err)
			c.markReachable(false)
			_ = workflow.Sleep(ctx, 10*time.Second)
			watch = c.startWatcher(watchCtx)
		})
		timerCtx, cancelTimer := workflow.WithCancel(ctx)
		if at := c.staleAt(); !at.IsZero() && at.After(workflow.Now(ctx)) && c.state.Observed.Reachable {
			sel.AddFuture(workflow.NewTimerWithOptions(timerCtx, at.Sub(workflow.Now(ctx)), workflow.TimerOptions{Summary: "observations go stale"}), func(workflow.Future) {})
		}
		sel.Select(ctx)
		cancelTimer()
		if c.state.Observed.Reachable && !c.staleAt().After(workflow.Now(ctx)) {
			c.markReachable(false)
			c.state.Observed.LastError = "no successful sample within " + c.staleAfter().String()
		}
		if c.gateDirty {
			c.fanOutGate(ctx)
		}
		info := workflow.GetInfo(ctx)
		if info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxEventsPerRun {
			stopWatch()
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			c.drainSignals(ctx)
			return workflow.NewContinueAsNewError(ctx, ClusterWorkflow, ClusterInput{Declared: c.state.Declared, TokenHash: c.state.TokenHash, State: c.state})
		}
	}
}

func (c *cluster) drainSignals(ctx workflow.Context) {
	for {
		var r contract.WatcherReport
		if !c.report.ReceiveAsync(&r) {
			break
		}
		c.applyReport(r)
	}
	for {
		var r contract.PoolRegistration
		if !c.register.ReceiveAsync(&r) {
			break
		}
		c.state.Pools[r.PoolID] = r.Thresholds
	}
	for {
		var r contract.PoolRegistration
		if !c.leave.ReceiveAsync(&r) {
			break
		}
		delete(c.state.Pools, r.PoolID)
	}
}

func (c *cluster) startWatcher(ctx workflow.Context) workflow.Future {
	sample := c.state.Declared.SampleInterval.D()
	if sample <= 0 {
		sample = 30 * time.Second
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "watch cluster " + c.state.Declared.ID,
		StartToCloseTimeout: 365 * 24 * time.Hour,
		HeartbeatTimeout:    2*sample + 30*time.Second,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
	return workflow.ExecuteActivity(actx, a.WatchCluster, activities.WatchInput{
		Cluster: c.state.Declared.ID, SampleInterval: types.Duration(sample), RefreshInterval: types.Duration(sample),
	})
}

func (c *cluster) applyReport(r contract.WatcherReport) {
	o := &c.state.Observed
	if r.Reachable && !r.LastSync.IsZero() {
		o.LastSyncAt = r.LastSync
		o.SyncState = contract.SyncConnected
	}
	o.LastError = r.LastError
	if !r.Reachable {
		o.SyncState = contract.SyncDisconnected
	}
	c.markReachable(r.Reachable)
}

func (c *cluster) markReachable(reachable bool) {
	if c.state.Observed.Reachable != reachable {
		c.state.Observed.Reachable = reachable
		if !reachable {
			c.state.Observed.SyncState = contract.SyncDisconnected
		}
		c.gateDirty = true
	}
}

func (c *cluster) applyRegistration(ctx workflow.Context, r contract.PoolRegistration) {
	if _, err := types.ParsePoolID(r.PoolID); err != nil {
		c.state.LastRejected = err.Error()
		return
	}
	c.state.Pools[r.PoolID] = r.Thresholds
	c.signalGate(ctx, r.PoolID, c.gate(workflow.Now(ctx)))
}

func (c *cluster) staleAfter() time.Duration {
	if d := c.state.Declared.StaleAfter.D(); d > 0 {
		return d
	}
	sample := c.state.Declared.SampleInterval.D()
	if sample <= 0 {
		sample = 30 * time.Second
	}
	return 4*sample + time.Minute
}

func (c *cluster) staleAt() time.Time {
	if c.state.Observed.LastSyncAt.IsZero() {
		return time.Time{}
	}
	return c.state.Observed.LastSyncAt.Add(c.staleAfter())
}

func (c *cluster) gate(now time.Time) contract.ClusterGate {
	return contract.ClusterGate{Phase: c.state.Declared.Phase, Reachable: c.state.Observed.Reachable, Region: c.state.Declared.Region, Since: now}
}

// fanOutGate tells every pool on the cluster at once.
func (c *cluster) fanOutGate(ctx workflow.Context) {
	c.gateDirty = false
	g := c.gate(workflow.Now(ctx))
	c.state.GateSince = g.Since
	for _, id := range workflow.DeterministicKeys(c.state.Pools) {
		c.signalGate(ctx, id, g)
	}
}

func (c *cluster) signalGate(ctx workflow.Context, poolID string, g contract.ClusterGate) {
	// Fire and forget: a pool that is gone simply does not hear it; a new
	// pool hears the gate when it registers.
	workflow.SignalExternalWorkflow(ctx, poolID, "", contract.SignalClusterGate, g)
}

func (c *cluster) status(now time.Time) contract.ClusterStatus {
	st := contract.ClusterStatus{Declared: c.state.Declared, Observed: c.state.Observed, Pools: c.state.Pools, LastRejected: c.state.LastRejected}
	st.Observed.Pools = len(c.state.Pools)
	if !c.state.Observed.Reachable {
		st.Frozen = "cluster unreachable: pools freeze scale-down"
	}
	return st
}
