package activities

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/mocks"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// The first sample after a (re)start signals every pool. On a big cluster
// that outlasts the heartbeat timeout (10,000 pools on the embedded server:
// the watcher timed out mid-sample, restarted with nothing sent and
// signalled every pool again, about once a minute), so the watcher
// heartbeats between its signals.
func TestAFullStateSampleHeartbeatsBetweenItsSignals(t *testing.T) {
	defer func(beat, report time.Duration) { sampleBeatEvery, reportEvery = beat, report }(sampleBeatEvery, reportEvery)
	sampleBeatEvery, reportEvery = 50*time.Millisecond, 100*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, _ := kubefake.NewClientset(kubefake.Options{})
	obs := kubernetes.NewObserver(client, kubernetes.Config{Cluster: "east", Provider: "sim"})
	defer obs.Close(ctx)

	const pools = 200
	registered := map[string]contract.PoolThresholds{}
	for i := range pools {
		registered[types.PoolKey{Org: "acme", Project: "web", Service: fmt.Sprintf("s%03d", i), Provider: "sim", Cluster: "east"}.WorkflowID()] = contract.PoolThresholds{}
	}
	temporal := mocks.NewClient(t)
	registers(temporal, "east", registered)
	var mu sync.Mutex
	signalled, beatsWhileSignalling, reports, reportsBeforeSignals, reportsWhileSignalling := 0, 0, 0, 0, 0
	temporal.On("SignalWorkflow", mock.Anything, mock.Anything, "", contract.SignalObserve, mock.Anything).Run(func(mock.Arguments) {
		time.Sleep(2 * time.Millisecond) // a signal's round trip to a busy server
		mu.Lock()
		signalled++
		mu.Unlock()
	}).Return(nil)
	temporal.On("SignalWorkflow", mock.Anything, "cluster/east", "", contract.SignalWatcherReport, mock.Anything).Run(func(args mock.Arguments) {
		mu.Lock()
		defer mu.Unlock()
		if r := args.Get(4).(contract.WatcherReport); !r.Reachable || r.LastSync.IsZero() {
			t.Errorf("watcher report %+v, want reachable with its sample's time", r)
		}
		reports++
		switch {
		case signalled == 0:
			reportsBeforeSignals++
		case signalled < pools:
			reportsWhileSignalling++
		}
	}).Return(nil)

	c := connectors.Cluster{ID: "east", Observer: obs}
	a := &Activities{Temporal: temporal, Clusters: oneCluster{c}}
	w := &watcher{a: a, cluster: c, sent: &clusterSent{fp: map[string]string{}}, log: log.NewStructuredLogger(slog.New(slog.DiscardHandler))}
	done := make(chan error, 1)
	go func() {
		done <- w.run(ctx, WatchInput{Cluster: "east", SampleInterval: types.Duration(time.Hour), RefreshInterval: types.Duration(time.Hour)}, func(WatchProgress) {
			mu.Lock()
			defer mu.Unlock()
			if signalled > 0 && signalled < pools {
				beatsWhileSignalling++
			}
		})
	}()
	eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return signalled == pools }, "every pool signalled")
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	// 200 signals of ≥ 2 ms are ≥ 400 ms: at least 4 beats of 50 ms.
	if beatsWhileSignalling < 4 {
		t.Fatalf("%d heartbeats while %d pools were signalled, want one every %s", beatsWhileSignalling, pools, sampleBeatEvery)
	}
	// The cluster hears of the sample before the pools do, and again
	// (every reportEvery) while they are signalled: a report held back by
	// a long sample read as stale observations and closed the gate.
	if reportsBeforeSignals != 1 {
		t.Fatalf("%d watcher reports before the first pool signal, want 1", reportsBeforeSignals)
	}
	if reportsWhileSignalling < 2 {
		t.Fatalf("%d watcher reports while %d pools were signalled over ≥ 400 ms, want one every %s", reportsWhileSignalling, pools, reportEvery)
	}
}
