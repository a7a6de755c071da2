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
	defer func(old time.Duration) { sampleBeatEvery = old }(sampleBeatEvery)
	sampleBeatEvery = 50 * time.Millisecond
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
	signalled, beatsBeforeReport, reported := 0, 0, false
	temporal.On("SignalWorkflow", mock.Anything, mock.Anything, "", contract.SignalObserve, mock.Anything).Run(func(mock.Arguments) {
		time.Sleep(2 * time.Millisecond) // a signal's round trip to a busy server
		mu.Lock()
		signalled++
		mu.Unlock()
	}).Return(nil)
	temporal.On("SignalWorkflow", mock.Anything, "cluster/east", "", contract.SignalWatcherReport, mock.Anything).Run(func(mock.Arguments) {
		mu.Lock()
		reported = true
		mu.Unlock()
	}).Return(nil).Maybe()

	c := connectors.Cluster{ID: "east", Observer: obs}
	a := &Activities{Temporal: temporal, Clusters: oneCluster{c}}
	w := &watcher{a: a, cluster: c, sent: map[string]string{}, log: log.NewStructuredLogger(slog.New(slog.DiscardHandler))}
	done := make(chan error, 1)
	go func() {
		done <- w.run(ctx, WatchInput{Cluster: "east", SampleInterval: types.Duration(time.Hour), RefreshInterval: types.Duration(time.Hour)}, func(WatchProgress) {
			mu.Lock()
			defer mu.Unlock()
			if !reported && signalled < pools {
				beatsBeforeReport++
			}
		})
	}()
	eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return signalled == pools }, "every pool signalled")
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	// 200 signals of ≥ 2 ms are ≥ 400 ms: at least 4 beats of 50 ms.
	if beatsBeforeReport < 4 {
		t.Fatalf("%d heartbeats while %d pools were signalled, want one every %s", beatsBeforeReport, pools, sampleBeatEvery)
	}
}
