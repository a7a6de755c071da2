package workflows

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
)

// A cluster of 2,500 pools tells a gate change to every pool exactly
// once, never with more than one batch of signals outstanding (Temporal
// fails the task beyond 2,000 pending signals); a small cluster still
// sends its signals all at once.
func TestGateFanoutBatchesLargeClusters(t *testing.T) {
	for _, n := range []int{3, 2500} {
		t.Run(fmt.Sprint(n, " pools"), func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.RegisterWorkflow(ClusterWorkflow)
			env.RegisterActivity(&activities.Activities{})
			env.OnActivity(a.WatchCluster, mock.Anything, mock.Anything).After(1000 * time.Hour).Return(nil)
			env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil)
			var mu sync.Mutex
			heard := map[string]int{}
			outstanding, most := 0, 0
			env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, contract.SignalClusterGate, mock.Anything).Return(
				func(_, id, _, _ string, arg any) error {
					mu.Lock()
					outstanding++
					most = max(most, outstanding)
					if arg.(contract.ClusterGate).Reachable {
						heard[id]++
					}
					mu.Unlock()
					// Held briefly, so signals sent together are outstanding together.
					time.Sleep(2 * time.Millisecond)
					mu.Lock()
					outstanding--
					mu.Unlock()
					return nil
				})
			pools := map[string]contract.PoolThresholds{}
			for i := range n {
				pools[fmt.Sprintf("pool/org%04d/web/api/sim/east", i)] = contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}
			}
			env.RegisterDelayedCallback(func() { watcherSees(env, true, "") }, time.Second)
			endCluster(env, time.Minute)
			env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(contract.PhaseActive),
				State: &ClusterState{Declared: declared(contract.PhaseActive), Pools: pools}})
			requireCanceled(t, env)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, heard, n, "every pool hears the reachable gate")
			for id, k := range heard {
				require.Equal(t, 1, k, "pool %s heard the gate %d times", id, k)
			}
			if n > gateFanoutBatch {
				require.LessOrEqual(t, most, gateFanoutBatch, "signals outstanding at once")
			} else {
				require.Equal(t, n, most, "a small cluster sends at once")
			}
		})
	}
}

// A fan-out cut short by the run's end continues after the last pool
// told, in the next run.
func TestGateFanoutResumesAfterItsMark(t *testing.T) {
	c := &cluster{state: &ClusterState{Pools: map[string]contract.PoolThresholds{}, Fanout: &GateFanout{After: "pool/b"}}}
	for _, id := range []string{"pool/a", "pool/b", "pool/c", "pool/d"} {
		c.state.Pools[id] = contract.PoolThresholds{}
	}
	require.Equal(t, []string{"pool/c", "pool/d"}, c.nextFanoutBatch())
	c.state.Fanout.After = "pool/bb" // a pool that left since
	require.Equal(t, []string{"pool/c", "pool/d"}, c.nextFanoutBatch())
	c.state.Fanout.After = "pool/d"
	require.Empty(t, c.nextFanoutBatch())
}

// The most pools a cluster takes, with long IDs, still continue as new
// far under Temporal's 2 MB payload limit: registration stops at
// maxClusterPoolBytes before maxClusterPools.
func TestClusterStateAtMostPoolsFitsAPayload(t *testing.T) {
	st := ClusterState{Declared: declared(contract.PhaseActive), Pools: map[string]contract.PoolThresholds{}, Fanout: &GateFanout{After: "pool/x"}}
	c := &cluster{state: &st, knownBytes: -1}
	for i := range maxClusterPools {
		id := fmt.Sprintf("pool/organization-%05d/project-name/service-name/aws/cluster-east-1", i)
		if c.poolsTooLarge(id) {
			break
		}
		st.Pools[id] = contract.PoolThresholds{IdleCPU: 0.35, IdleMemory: 0.45}
		c.knownBytes = -1
	}
	require.Less(t, len(st.Pools), maxClusterPools, "the byte bound comes first with long IDs")
	b, err := json.Marshal(ClusterInput{Declared: st.Declared, State: &st})
	require.NoError(t, err)
	require.Less(t, len(b), 1<<20*3/2, "cluster state with %d pools is %d bytes", len(st.Pools), len(b))
	t.Logf("cluster state with %d pools: %d bytes", len(st.Pools), len(b))
}
