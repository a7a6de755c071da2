package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// WatchInput configures one cluster's watcher.
type WatchInput struct {
	Cluster        string         `json:"cluster"`
	SampleInterval types.Duration `json:"sampleInterval"`
	// RefreshInterval is how often the registered pools are re-read.
	RefreshInterval types.Duration `json:"refreshInterval"`
}

// WatchProgress is the watcher's heartbeat.
type WatchProgress struct {
	Samples  int       `json:"samples"`
	Signals  int       `json:"signals"`
	LastErr  string    `json:"lastErr,omitempty"`
	LastSync time.Time `json:"lastSync"`
}

// WatchCluster samples the cluster every SampleInterval and signals
// `observe` only to pools whose decision inputs crossed a line: a pod became
// unschedulable or got scheduled, a node went idle or busy, a node joined or
// left. After a restart it re-sends full state to every pool, unless it
// restarted on this worker within sentMemoryFor (watch_sent.go). When the
// cluster's observer keeps a watch (connectors.ChangeSource: the Kubernetes
// observer with informers), its events also wake the watcher between
// samples, coalesced to at most one `observe` per pool per EventInterval.
// It also reports the cluster's observed half to the cluster workflow. It
// runs until cancelled, heartbeating every sample and, in a long one,
// between its signals.
func (a *Activities) WatchCluster(ctx context.Context, in WatchInput) error {
	if a.Temporal == nil {
		return asTemporalError(errclass.New(errclass.Permanent, "worker", "watch", errors.New("the watcher needs a Temporal client")))
	}
	c, err := a.cluster(ctx, in.Cluster)
	if err != nil {
		return err
	}
	w := &watcher{a: a, cluster: c, sent: a.sentTo.of(c.ID, time.Now()), log: activity.GetLogger(ctx)}
	return w.run(ctx, in, func(p WatchProgress) { activity.RecordHeartbeat(ctx, p) })
}

// EventInterval is the least time between two event-driven `observe`
// signals to one pool: a burst of pod events costs a pool two signals.
const EventInterval = time.Second

func (w *watcher) run(ctx context.Context, in WatchInput, heartbeat func(WatchProgress)) error {
	sample := in.SampleInterval.D()
	if sample <= 0 {
		sample = 30 * time.Second
	}
	refresh := in.RefreshInterval.D()
	if refresh <= 0 {
		refresh = 5 * time.Minute
	}
	progress := &w.progress
	// A full-state sample of a big cluster signals every pool, one call
	// each: 10,000 pools outlast the heartbeat timeout, and a watcher timed
	// out mid-sample restarts with nothing sent, so signals all again.
	w.beat = func() { heartbeat(*progress) }
	var pools map[string]contract.PoolThresholds
	var refreshedAt time.Time
	ticker := time.NewTicker(sample)
	defer ticker.Stop()
	// Heartbeat between samples too, so the server notices a dead worker
	// within WatcherHeartbeatTimeout whatever the sample interval.
	beat := time.NewTicker(WatcherHeartbeatTimeout / 3)
	defer beat.Stop()
	events := newCoalescer(EventInterval)
	if cs, ok := w.cluster.Observer.(connectors.ChangeSource); ok {
		if stop, ok := cs.WatchChanges(events.note); ok {
			defer stop()
		}
	}
	for {
		if pools == nil || time.Since(refreshedAt) >= refresh {
			if p, err := w.a.registeredPools(ctx, in.Cluster); err == nil {
				pools, refreshedAt = p, time.Now()
			} else {
				progress.LastErr = err.Error()
			}
		}
		signals, reachable, obs, err := w.sample(ctx, pools, nil)
		progress.Samples++
		progress.Signals += signals
		if err != nil {
			progress.LastErr = err.Error()
			w.log.Warn("cluster sample failed", "cluster", in.Cluster, "error", err)
		}
		w.reportObserved(ctx, reachable, obs)
		heartbeat(*progress)
		var retry <-chan time.Time
	wait:
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-beat.C:
				heartbeat(*progress)
			case <-ticker.C:
				break wait
			case <-events.kick:
			case <-retry:
			}
			// Pools whose watch events wait: sample now for those due,
			// and come back when the others are.
			due, next := events.due(time.Now())
			if len(due) > 0 {
				n, _, _, err := w.sample(ctx, pools, due)
				progress.Signals += n
				if err != nil {
					progress.LastErr = err.Error()
				}
				events.sent(due, time.Now())
			}
			retry = nil
			if !next.IsZero() {
				retry = time.After(time.Until(next))
			}
		}
	}
}

// WatcherHeartbeatTimeout is how long the server waits for a watcher's
// heartbeat before it retries the watcher on another worker.
const WatcherHeartbeatTimeout = 30 * time.Second

// sampleBeatEvery is how often a long sample heartbeats between its
// signals.
var sampleBeatEvery = WatcherHeartbeatTimeout / 6

// watcher holds what was last sent to each pool.
type watcher struct {
	a       *Activities
	cluster connectors.Cluster
	// sent is each pool's last fingerprint, this worker's (watch_sent.go):
	// empty after a restart on another worker or after sentMemoryFor, so
	// the first sample re-sends full state.
	sent *clusterSent
	// progress is what the heartbeat and the cluster report carry.
	progress WatchProgress
	// beat heartbeats the watcher's progress (nil in a bare watcher).
	beat          func()
	lastReachable *bool
	lastReport    time.Time
	// signedReachable and lastSigned track the token-signed report.
	signedReachable *bool
	lastSigned      time.Time
	signedCounts    clusterCounts
	log             log.Logger
}

// sample observes the cluster and signals the pools whose fingerprint
// changed: every registered pool, or only those in only when it is set
// (watch events), from a fresh sample then, since the events are newer
// than any cached one.
func (w *watcher) sample(ctx context.Context, pools map[string]contract.PoolThresholds, only []string) (int, bool, connectors.ClusterObservation, error) {
	// Through the worker's short cache, so pools resyncing right now
	// reuse this sample instead of listing the cluster again.
	if only != nil {
		w.a.forgetObservation(w.cluster.ID)
	}
	obs, err := w.a.observeCluster(ctx, w.cluster)
	if err != nil {
		return 0, false, obs, err
	}
	w.sent.touch(time.Now())
	if only == nil {
		// The cluster hears it was reached before any pool is signalled: a
		// full-state sample of 10,000 pools takes minutes, and a report
		// held back that long reads as stale observations, which closes
		// the gate and fans the change out to every pool.
		w.progress.LastErr, w.progress.LastSync = "", time.Now()
		w.reportObserved(ctx, true, obs)
	}
	ids := make([]string, 0, len(pools))
	for id := range pools {
		ids = append(ids, id)
	}
	if only != nil {
		ids = ids[:0]
		for _, id := range only {
			if _, ok := pools[id]; ok {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	signals := 0
	beaten := time.Now()
	for _, id := range ids {
		if w.beat != nil && time.Since(beaten) >= sampleBeatEvery {
			w.beat()
			if only == nil {
				w.reportObserved(ctx, true, obs) // its once-a-minute refresh
			}
			beaten = time.Now()
		}
		key, err := types.ParsePoolID(id)
		if err != nil {
			continue
		}
		reason := "crossing"
		last, seen := w.sent.get(id)
		if !seen {
			reason = "full-state"
		}
		po := PoolPart(obs.Pools, key, obs.ObservedAt, reason)
		fp := Fingerprint(po, pools[id])
		if seen && last == fp {
			continue
		}
		if po.Auth, err = w.a.signSystem(id, contract.SignalObserve, po); err != nil {
			return signals, true, obs, err
		}
		err = w.a.Temporal.SignalWorkflow(ctx, id, "", contract.SignalObserve, po)
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			w.sent.forget(id) // pool gone
		case err != nil:
			return signals, true, obs, fmt.Errorf("signal %s: %w", id, err)
		default:
			w.sent.set(id, fp)
			signals++
		}
	}
	return signals, true, obs, nil
}

// reportEvery is how often an unchanged watcher reports to the cluster
// workflow; the cluster's staleness bound (staleAfter) allows for it.
var reportEvery = time.Minute

// reportObserved tells the cluster workflow about reachability when it
// changes, and at most once a minute (reportEvery) otherwise.
func (w *watcher) reportObserved(ctx context.Context, reachable bool, obs connectors.ClusterObservation) {
	p := w.progress
	if w.cluster.EnrollmentToken != "" {
		counts := countsOf(obs)
		if w.signedReachable == nil || *w.signedReachable != reachable || counts != w.signedCounts || time.Since(w.lastSigned) >= reportEvery {
			// A failed report is tried again at the next sample.
			if err := w.reportSigned(ctx, reachable, obs); err != nil {
				w.log.Warn("signed observed report not accepted", "cluster", w.cluster.ID, "error", err)
			} else {
				w.signedReachable, w.lastSigned, w.signedCounts = &reachable, time.Now(), counts
			}
		}
	}
	if w.lastReachable != nil && *w.lastReachable == reachable && time.Since(w.lastReport) < reportEvery {
		return
	}
	report := contract.WatcherReport{Reachable: reachable, LastSync: p.LastSync, LastError: p.LastErr, At: time.Now()}
	clusterWF := types.ClusterWorkflowID(w.cluster.ID)
	var err error
	if report.Auth, err = w.a.signSystem(clusterWF, contract.SignalWatcherReport, report); err != nil {
		w.log.Error("cannot sign watcher report", "cluster", w.cluster.ID, "error", err)
		return
	}
	err = w.a.Temporal.SignalWorkflow(ctx, clusterWF, "", contract.SignalWatcherReport, report)
	if err == nil {
		w.lastReachable, w.lastReport = &reachable, time.Now()
	}
}

// reportSigned sends the observed half authenticated by the cluster's
// enrollment token: the token is resolved here, on the worker, and only a
// signature leaves it.
func (w *watcher) reportSigned(ctx context.Context, reachable bool, obs connectors.ClusterObservation) error {
	token, err := w.cluster.EnrollmentToken.Resolve(ctx, nil)
	if err != nil {
		return err
	}
	counts := countsOf(obs)
	r := contract.ObservedReport{ClusterID: w.cluster.ID, ReportedAt: time.Now(), SyncState: contract.SyncConnected, AgentVersion: WatcherVersion, Nodes: counts.nodes, Pools: counts.pools}
	if !reachable {
		r.SyncState = contract.SyncDisconnected
	}
	signed, err := contract.SignObservedReport(token, r)
	if err != nil {
		return err
	}
	h, err := w.a.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: types.ClusterWorkflowID(w.cluster.ID), UpdateName: contract.UpdateReportObserved,
		Args: []any{signed}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// clusterCounts are the node and pool counts a signed report carries.
type clusterCounts struct{ nodes, pools int }

func countsOf(obs connectors.ClusterObservation) clusterCounts {
	c := clusterCounts{pools: len(obs.Pools)}
	for _, po := range obs.Pools {
		c.nodes += len(po.Nodes)
	}
	return c
}

// WatcherVersion is what the watcher reports as its agent version.
const WatcherVersion = "visor-watcher/1"

// registeredPools asks the cluster workflow which pools it carries.
func (a *Activities) registeredPools(ctx context.Context, cluster string) (map[string]contract.PoolThresholds, error) {
	resp, err := a.Temporal.QueryWorkflow(ctx, types.ClusterWorkflowID(cluster), "", contract.QueryClusterStatus)
	if err != nil {
		return nil, err
	}
	var st contract.ClusterStatus
	if err := resp.Get(&st); err != nil {
		return nil, err
	}
	if st.Pools == nil {
		st.Pools = map[string]contract.PoolThresholds{}
	}
	return st.Pools, nil
}

// Fingerprint captures exactly the pool's decision inputs: pending pods
// (with their transition times), each shape's counts, and each node's state and idle-ness under
// the pool's thresholds. Equal fingerprints mean nothing crossed a line.
func Fingerprint(po types.PoolObservation, t contract.PoolThresholds) string {
	if t.IdleCPU == 0 && t.IdleMemory == 0 {
		d := types.DefaultPolicy()
		t.IdleCPU, t.IdleMemory = d.IdleCPUThreshold, d.IdleMemoryThreshold
	}
	var b strings.Builder
	pods := make([]string, 0, len(po.PendingPods))
	for _, p := range po.PendingPods {
		pods = append(pods, p.Key()+"@"+p.UnschedulableSince.UTC().Format(time.RFC3339))
	}
	sort.Strings(pods)
	b.WriteString(strings.Join(pods, ","))
	b.WriteString("|")
	// Shapes carry the pods not listed: their counts move the fingerprint.
	shapes := make([]string, 0, len(po.PendingShapes))
	for _, s := range po.PendingShapes {
		shapes = append(shapes, fmt.Sprintf("%s:%d:%d@%s", s.Key, s.Count, s.Listed, s.UnlistedSince.UTC().Format(time.RFC3339)))
	}
	sort.Strings(shapes)
	b.WriteString(strings.Join(shapes, ","))
	b.WriteString("|")
	nodes := make([]string, 0, len(po.Nodes))
	for _, n := range po.Nodes {
		idle := n.IdleBelow(t.IdleCPU, t.IdleMemory)
		nodes = append(nodes, fmt.Sprintf("%s:%s:%t", n.Name, n.State, idle))
	}
	sort.Strings(nodes)
	b.WriteString(strings.Join(nodes, ","))
	// A CapacityBuffer's shape, count or error moves it too: the pool buys
	// for buffers as for pending pods.
	if len(po.Buffers) > 0 {
		buffers := make([]string, 0, len(po.Buffers))
		for _, buf := range po.Buffers {
			shape, _ := json.Marshal(buf)
			buffers = append(buffers, string(shape))
		}
		sort.Strings(buffers)
		b.WriteString("|")
		b.WriteString(strings.Join(buffers, ","))
	}
	return b.String()
}
