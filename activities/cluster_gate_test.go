package activities

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// FanOutGate tells every registered pool the gate once, skips a pool
// that is gone, fails on any other refusal, and a retry goes on after the
// last pool its heartbeat says was told.
func TestFanOutGateTellsEveryPoolOnceAndResumesAfterItsMark(t *testing.T) {
	const n = 100
	registered := map[string]contract.PoolThresholds{}
	var ids []string
	for i := range n {
		id := types.PoolKey{Org: "acme", Project: "web", Service: fmt.Sprintf("s%03d", i), Provider: "sim", Cluster: "east"}.WorkflowID()
		registered[id] = contract.PoolThresholds{}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	gone := ids[7]
	gate := contract.ClusterGate{Phase: contract.PhaseDraining, Reachable: true, Region: "us-east"}

	run := func(t *testing.T, after string, refuse string) (map[string]int, int, error) {
		t.Helper()
		temporal := mocks.NewClient(t)
		registers(temporal, "east", registered)
		var mu sync.Mutex
		told := map[string]int{}
		temporal.On("SignalWorkflow", mock.Anything, mock.Anything, "", contract.SignalClusterGate, gate).Return(func(_ context.Context, id, _, _ string, _ any) error {
			switch id {
			case gone:
				return serviceerror.NewNotFound("workflow not found")
			case refuse:
				return serviceerror.NewUnavailable("frontend restarting")
			}
			mu.Lock()
			defer mu.Unlock()
			told[id]++
			return nil
		}).Maybe()
		var ts testsuite.WorkflowTestSuite
		env := ts.NewTestActivityEnvironment()
		acts := &Activities{Temporal: temporal}
		env.RegisterActivity(acts)
		if after != "" {
			env.SetHeartbeatDetails(after)
		}
		v, err := env.ExecuteActivity(acts.FanOutGate, GateFanoutInput{Cluster: "east", Gate: gate})
		sent := 0
		if err == nil {
			require.NoError(t, v.Get(&sent))
		}
		return told, sent, err
	}

	told, sent, err := run(t, "", "")
	require.NoError(t, err)
	require.Equal(t, n-1, sent, "pools told")
	require.Len(t, told, n-1)
	require.NotContains(t, told, gone)
	for id, k := range told {
		require.Equal(t, 1, k, "pool %s told %d times", id, k)
	}

	// A refusal other than not-found fails the attempt, naming the pool.
	_, _, err = run(t, "", ids[50])
	require.ErrorContains(t, err, ids[50])
	require.ErrorContains(t, err, "frontend restarting")

	// A retry after ids[49] tells only the pools after it.
	told, sent, err = run(t, ids[49], "")
	require.NoError(t, err)
	require.Equal(t, n-50, sent)
	require.NotContains(t, told, ids[49])
	require.Contains(t, told, ids[50])
	require.Contains(t, told, ids[n-1])
}
