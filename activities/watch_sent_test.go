package activities

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/mocks"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// A watcher restarted on the same worker soon after the last one (its
// cluster continued as new) signals only what changed; one restarted
// after sentMemoryFor, or on another worker, re-sends full state.
func TestARestartedWatcherGoesOnFromWhatThisWorkerSent(t *testing.T) {
	ctx := context.Background()
	client, _ := kubefake.NewClientset(kubefake.Options{})
	obs := kubernetes.NewObserver(client, kubernetes.Config{Cluster: "east", Provider: "sim"})
	defer obs.Close(ctx)
	pools := map[string]contract.PoolThresholds{}
	for i := range 20 {
		pools[types.PoolKey{Org: "acme", Project: "web", Service: fmt.Sprintf("s%02d", i), Provider: "sim", Cluster: "east"}.WorkflowID()] = contract.PoolThresholds{}
	}
	var signalled atomic.Int32
	temporal := mocks.NewClient(t)
	temporal.On("SignalWorkflow", mock.Anything, mock.Anything, "", contract.SignalObserve, mock.Anything).Run(func(mock.Arguments) {
		signalled.Add(1)
	}).Return(nil)
	temporal.On("SignalWorkflow", mock.Anything, "cluster/east", "", contract.SignalWatcherReport, mock.Anything).Return(nil).Maybe()
	c := connectors.Cluster{ID: "east", Observer: obs}
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	sample := func(a *Activities, now time.Time) int32 {
		t.Helper()
		before := signalled.Load()
		w := &watcher{a: a, cluster: c, sent: a.sentTo.of("east", now), log: quiet}
		_, _, _, err := w.sample(ctx, pools, nil)
		require.NoError(t, err)
		return signalled.Load() - before
	}
	worker := &Activities{Temporal: temporal, Clusters: oneCluster{c}}
	now := time.Now()
	require.EqualValues(t, 20, sample(worker, now), "the first watcher sends full state")
	require.EqualValues(t, 0, sample(worker, now.Add(10*time.Second)), "a watcher restarted here at once re-sent unchanged pools")
	other := &Activities{Temporal: temporal, Clusters: oneCluster{c}}
	require.EqualValues(t, 20, sample(other, now.Add(10*time.Second)), "another worker knows nothing sent")
	// The sample touched the memory at wall-clock time; a start past
	// sentMemoryFor after that finds it emptied.
	require.EqualValues(t, 20, sample(worker, time.Now().Add(sentMemoryFor+time.Second)), "a watcher started long after re-sends full state")
}
