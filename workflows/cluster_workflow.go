package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// ClusterInput starts or continues a cluster workflow.
type ClusterInput struct {
	Declared contract.ClusterDeclared `json:"declared"`
	// TokenHash (SHA-256, hex) and ReportKey (Ed25519 public key) verify
	// the enrollment token; the token itself never enters history
	// (contract.TokenCredentials).
	TokenHash string        `json:"tokenHash,omitempty"`
	ReportKey string        `json:"reportKey,omitempty"`
	State     *ClusterState `json:"state,omitempty"`
}

// ClusterState is the cluster workflow's durable state. The two observed
// sources are kept raw here; Observed.Reachable and SyncState are derived
// from them (derive).
type ClusterState struct {
	Declared      contract.ClusterDeclared           `json:"declared"`
	Observed      contract.ClusterObserved           `json:"observed"`
	Pools         map[string]contract.PoolThresholds `json:"pools"`
	TokenHash     string                             `json:"tokenHash,omitempty"`
	ReportKey     string                             `json:"reportKey,omitempty"`
	TokenIssuedAt time.Time                          `json:"tokenIssuedAt,omitempty"`
	// WatcherReachable is the watcher's last word on reaching the cluster.
	WatcherReachable bool `json:"watcherReachable"`
	// AgentSync and AgentReportedAt are from the last accepted report;
	// AgentReportedAt (the agent's clock) bounds replays.
	AgentSync       contract.SyncState `json:"agentSync,omitempty"`
	AgentReportedAt time.Time          `json:"agentReportedAt,omitempty"`
	// Gate is what the pools were last told; Frozen says why, if closed.
	Gate            contract.ClusterGate  `json:"gate"`
	Frozen          string                `json:"frozen,omitempty"`
	LastPhaseChange *contract.PhaseChange `json:"lastPhaseChange,omitempty"`
	LastTierChange  *contract.TierChange  `json:"lastTierChange,omitempty"` // cluster_tier.go
	LastRejected    string                `json:"lastRejected,omitempty"`
	// Rejected counts signals refused (undecodable, invalid, future-dated).
	Rejected int `json:"rejected,omitempty"`
	// Nonces of signed requests accepted recently: a replay is refused.
	Nonces map[string]time.Time `json:"nonces,omitempty"`
	// Fanout is a gate change not yet told to every pool (cluster_fanout.go).
	Fanout *GateFanout `json:"fanout,omitempty"`
}

type cluster struct {
	state    *ClusterState
	report   workflow.ReceiveChannel
	register workflow.ReceiveChannel
	leave    workflow.ReceiveChannel
	// wake is poked by update handlers so the loop refreshes at once.
	wake workflow.Channel
	// joined pools have not heard the gate yet.
	joined []string
	// published is the phase the search attribute carries.
	published string
	details   string
	// phaseSeq counts accepted phase changes; fannedSeq is the last one
	// the pools were told of.
	phaseSeq, fannedSeq int
	// stale is the pending staleness timer, due at staleAt.
	stale       workflow.Future
	staleCancel workflow.CancelFunc
	staleAt     time.Time
	// auth checks the worker's system signature on watcher reports, with
	// the trust the run read.
	auth authority
	// knownBytes is poolBytes' count, -1 until first needed.
	knownBytes int
	// gateByActivity: this run fans a large cluster's gate out through
	// the FanOutGate activity (changeGateActivity); fanout is that
	// activity while it runs, fanoutRetry the wait after it failed.
	gateByActivity bool
	fanout         workflow.Future
	fanoutCancel   workflow.CancelFunc
	fanoutRetry    workflow.Future
	// closing: the run is about to continue as new, so it starts nothing
	// the next run would not see finish.
	closing bool
}

// ClusterWorkflow carries one enrolled cluster: its declared and observed
// halves, the watcher that samples it, and the gate its pools obey.
func ClusterWorkflow(ctx workflow.Context, in ClusterInput) error {
	if err := in.Declared.Validate(); err != nil {
		return fmt.Errorf("invalid cluster: %w", err)
	}
	c := &cluster{
		state:      in.State,
		report:     workflow.GetSignalChannel(ctx, contract.SignalWatcherReport),
		register:   workflow.GetSignalChannel(ctx, contract.SignalPoolRegistered),
		leave:      workflow.GetSignalChannel(ctx, contract.SignalPoolDeregistered),
		wake:       workflow.NewBufferedChannel(ctx, 16),
		knownBytes: -1,
	}
	if c.state == nil {
		c.state = &ClusterState{Declared: in.Declared, TokenHash: in.TokenHash, ReportKey: in.ReportKey,
			TokenIssuedAt: workflow.Now(ctx), Pools: map[string]contract.PoolThresholds{}}
	}
	if c.state.Pools == nil {
		c.state.Pools = map[string]contract.PoolThresholds{}
	}
	if v, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(saClusterPhase); ok {
		c.published = v
	}
	if err := c.registerHandlers(ctx); err != nil {
		return err
	}
	c.loadTrust(ctx)
	c.gateByActivity = workflow.GetVersion(ctx, changeGateActivity, workflow.DefaultVersion, 1) == 1
	return c.run(ctx)
}

func (c *cluster) run(ctx workflow.Context) error {
	watchCtx, stopWatch := workflow.WithCancel(ctx)
	watch, restart := c.startWatcher(watchCtx), workflow.Future(nil)
	for {
		if c.auth.refresh {
			c.loadTrust(ctx)
		}
		c.refresh(ctx)
		if c.historyFull(ctx) {
			c.closing = true
			stopWatch()
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			c.drainSignals(ctx)
			return workflow.NewContinueAsNewError(ctx, ClusterWorkflow, ClusterInput{Declared: c.state.Declared, State: c.state})
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		// Raw receives: a payload that does not decode is recorded and
		// dropped, never waited past (a typed Receive would block on it).
		sel.AddReceive(c.report, func(ch workflow.ReceiveChannel, _ bool) {
			if r, err := receive[contract.WatcherReport](ctx, ch); err != nil {
				c.rejectSignal(ctx, err)
			} else {
				c.applyWatcherReport(ctx, r)
			}
		})
		sel.AddReceive(c.register, func(ch workflow.ReceiveChannel, _ bool) {
			if r, err := receive[contract.PoolRegistration](ctx, ch); err != nil {
				c.rejectSignal(ctx, err)
			} else {
				c.applyRegistration(ctx, r)
			}
			if c.gateByActivity {
				c.takeRegistrations(ctx)
			}
		})
		sel.AddReceive(c.leave, func(ch workflow.ReceiveChannel, _ bool) {
			if r, err := receive[contract.PoolRegistration](ctx, ch); err != nil {
				c.rejectSignal(ctx, err)
			} else {
				c.removePool(r.PoolID)
			}
		})
		sel.AddReceive(c.wake, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
		if watch != nil {
			sel.AddFuture(watch, func(f workflow.Future) {
				// The watcher only ends by failing past its retries (or by
				// being cancelled): count the cluster unreachable and start
				// it again shortly, without blocking the loop.
				err := f.Get(ctx, nil)
				if ctx.Err() != nil {
					return
				}
				c.state.Observed.LastError = fmt.Sprintf("watcher failed: %v", err)
				c.state.WatcherReachable = false
				watch = nil
				restart = workflow.NewTimerWithOptions(watchCtx, 10*time.Second, workflow.TimerOptions{Summary: "restart the watcher"})
			})
		} else {
			sel.AddFuture(restart, func(workflow.Future) { watch = c.startWatcher(watchCtx) })
		}
		c.awaitFanout(ctx, sel)
		if stale := c.staleTimer(ctx); stale != nil {
			sel.AddFuture(stale, func(workflow.Future) { c.stale = nil })
		}
		sel.Select(ctx)
		if ctx.Err() != nil {
			stopWatch()
			return ctx.Err()
		}
	}
}

// staleTimer is the one pending timer for the next moment a source goes
// stale. A later deadline keeps the pending timer (it fires early and is
// set again), so a watcher report each minute costs no timer events; only
// an earlier deadline replaces it.
func (c *cluster) staleTimer(ctx workflow.Context) workflow.Future {
	now := workflow.Now(ctx)
	at := c.nextChange(now)
	if c.stale != nil && (at.IsZero() || !at.Before(c.staleAt)) {
		return c.stale
	}
	if c.staleCancel != nil {
		c.staleCancel()
	}
	c.stale, c.staleCancel, c.staleAt = nil, nil, time.Time{}
	if at.IsZero() {
		return nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	c.stale = workflow.NewTimerWithOptions(tctx, at.Sub(now), workflow.TimerOptions{Summary: "observations go stale"})
	c.staleCancel, c.staleAt = cancel, at
	return c.stale
}

// refresh derives the observed half, tells the pools if their gate
// changed (and new pools in any case), and updates what the Web UI shows.
func (c *cluster) refresh(ctx workflow.Context) {
	now := workflow.Now(ctx)
	c.derive(now)
	g := c.gate(now)
	if g.Phase != c.state.Gate.Phase || g.Reachable != c.state.Gate.Reachable || g.Region != c.state.Gate.Region || g.Tier != c.state.Gate.Tier {
		c.state.Gate = g
		c.joined = nil
		c.tellPools(ctx)
	} else if c.state.Fanout != nil {
		c.continueFanout(ctx)
	}
	if c.gateByActivity && len(c.joined) > gateFanoutBatch {
		// More than a batch joined at once: the fan-out tells them (and
		// the others again), from a pool list that includes them.
		c.joined = nil
		c.tellPools(ctx)
	}
	for _, id := range c.joined {
		if _, ok := c.state.Pools[id]; ok {
			c.signalGate(ctx, id, c.state.Gate)
		}
	}
	c.joined = nil
	c.fannedSeq = c.phaseSeq
	c.publish(ctx)
}

// takeRegistrations applies every buffered registration, so refresh tells
// the pools that joined together: thousands of them buffered behind a
// slow workflow task, one signal each, passed Temporal's limit of 2,000
// pending signals and failed the task (changeGateActivity).
func (c *cluster) takeRegistrations(ctx workflow.Context) {
	receiveEach(c.register, func(r contract.PoolRegistration) { c.applyRegistration(ctx, r) }, c.rejecter(ctx))
}

func (c *cluster) drainSignals(ctx workflow.Context) {
	receiveEach(c.report, func(r contract.WatcherReport) { c.applyWatcherReport(ctx, r) }, c.rejecter(ctx))
	c.takeRegistrations(ctx)
	receiveEach(c.leave, func(r contract.PoolRegistration) { c.removePool(r.PoolID) }, c.rejecter(ctx))
	// Pools that joined at the boundary hear the gate before the run ends.
	c.refresh(ctx)
}

// watcherMaxBackoff caps the watcher's retry backoff.
const watcherMaxBackoff = 10 * time.Second

func (c *cluster) startWatcher(ctx workflow.Context) workflow.Future {
	sample := c.sampleInterval()
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "watch cluster " + c.state.Declared.ID,
		StartToCloseTimeout: 365 * 24 * time.Hour,
		// The watcher heartbeats every few seconds whatever its sample
		// interval, so a dead worker's watcher is noticed within
		// watcherHeartbeatTimeout; retries back off to at most
		// watcherMaxBackoff, never a minute per attempt, so a restarted
		// worker samples again within a few sample intervals.
		HeartbeatTimeout:    activities.WatcherHeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    watcherMaxBackoff,
		},
	})
	return workflow.ExecuteActivity(actx, a.WatchCluster, activities.WatchInput{
		Cluster: c.state.Declared.ID, SampleInterval: types.Duration(sample), RefreshInterval: types.Duration(sample),
	})
}

// rejecter is rejectSignal for receiveEach.
func (c *cluster) rejecter(ctx workflow.Context) func(error) {
	return func(err error) { c.rejectSignal(ctx, err) }
}

// rejectSignal records a signal that did not decode or validate.
func (c *cluster) rejectSignal(ctx workflow.Context, err error) {
	c.state.LastRejected = poolcore.Truncate(fmt.Sprintf("signal at %s: %v", workflow.Now(ctx).UTC().Format(time.RFC3339), err), poolcore.MaxRejectionText)
	c.state.Rejected++
	workflow.GetLogger(ctx).Warn("signal rejected", "error", err)
}

// maxClusterPools bounds the pools one cluster carries, and
// maxClusterPoolBytes what their IDs take in the state it continues as
// new with (long IDs reach Temporal's 2 MB payload limit before 20,000).
const (
	maxClusterPools     = 20000
	maxClusterPoolBytes = 1 << 20
	// poolEntryBytes is a pool's JSON in the state besides its ID.
	poolEntryBytes = 48
)

// poolsTooLarge says whether one more pool would take the cluster's pool
// list past maxClusterPoolBytes.
func (c *cluster) poolsTooLarge(id string) bool {
	return c.poolBytes()+len(id)+poolEntryBytes > maxClusterPoolBytes
}

// poolBytes is what the pool list takes, counted once per run and kept
// up to date as pools join and leave.
func (c *cluster) poolBytes() int {
	if c.knownBytes < 0 {
		c.knownBytes = 0
		for id := range c.state.Pools {
			c.knownBytes += len(id) + poolEntryBytes
		}
	}
	return c.knownBytes
}

func (c *cluster) removePool(id string) {
	if _, ok := c.state.Pools[id]; ok && c.knownBytes >= 0 {
		c.knownBytes -= len(id) + poolEntryBytes
	}
	delete(c.state.Pools, id)
}

func (c *cluster) applyRegistration(ctx workflow.Context, r contract.PoolRegistration) {
	if _, err := types.ParsePoolID(r.PoolID); err != nil {
		c.state.LastRejected = fmt.Sprintf("pool-registered at %s: %v", workflow.Now(ctx).UTC().Format(time.RFC3339), err)
		return
	}
	_, known := c.state.Pools[r.PoolID]
	if !known && len(c.state.Pools) >= maxClusterPools {
		c.rejectSignal(ctx, fmt.Errorf("pool-registered %s: the cluster already carries %d pools", r.PoolID, maxClusterPools))
		return
	}
	if !known && c.poolsTooLarge(r.PoolID) {
		c.rejectSignal(ctx, fmt.Errorf("pool-registered %s: the cluster's %d pools already take %d KiB of its state (at most %d KiB, to continue as new under Temporal's 2 MB payload limit)",
			r.PoolID, len(c.state.Pools), c.poolBytes()/1024, maxClusterPoolBytes/1024))
		return
	}
	if !known && c.knownBytes >= 0 {
		c.knownBytes += len(r.PoolID) + poolEntryBytes
	}
	c.state.Pools[r.PoolID] = r.Thresholds
	c.joined = append(c.joined, r.PoolID)
}

func (c *cluster) gate(now time.Time) contract.ClusterGate {
	return contract.ClusterGate{Phase: c.state.Declared.Phase, Reachable: c.state.Observed.Reachable, Region: c.state.Declared.Region, Reason: c.state.Frozen, Since: now,
		Tier: c.state.Declared.Tier}
}

func (c *cluster) status() contract.ClusterStatus {
	s := c.state
	return contract.ClusterStatus{
		Declared: s.Declared, Observed: s.Observed, Pools: s.Pools, Frozen: s.Frozen, LastRejected: s.LastRejected,
		TokenFingerprint: contract.TokenFingerprint(s.TokenHash), TokenIssuedAt: s.TokenIssuedAt, LastPhaseChange: s.LastPhaseChange,
		LastTierChange: s.LastTierChange,
	}
}
