package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/contract"
)

// A small cluster sends its gate signals all at once; a cluster of 2,500
// pools tells a gate change through one FanOutGate activity, with the
// gate and its cluster, and sends no signal of its own (two history events
// per pool made a 10,000-pool cluster continue as new five times per
// change, each new run restarting its watcher).
func TestGateFanoutOfALargeClusterIsOneActivity(t *testing.T) {
	for _, n := range []int{3, 2500} {
		t.Run(fmt.Sprint(n, " pools"), func(t *testing.T) {
			env := newFanoutCluster()
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
				}).Maybe()
			var fanouts []activities.GateFanoutInput
			env.OnActivity(a.FanOutGate, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.GateFanoutInput) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					fanouts = append(fanouts, in)
					return n, nil
				}).Maybe()
			env.RegisterDelayedCallback(func() { watcherSees(env, true, "") }, time.Second)
			endCluster(env, time.Minute)
			env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(contract.PhaseActive), State: unreachableState(n)})
			requireCanceled(t, env)
			mu.Lock()
			defer mu.Unlock()
			if n > gateFanoutBatch {
				require.Empty(t, heard, "a large cluster signalled its pools itself")
				require.Len(t, fanouts, 1, "fan-outs of one gate change")
				require.Equal(t, "east", fanouts[0].Cluster)
				require.True(t, fanouts[0].Gate.Reachable, "the fan-out tells the reachable gate")
				return
			}
			require.Empty(t, fanouts, "a small cluster started a fan-out")
			require.Len(t, heard, n, "every pool hears the reachable gate")
			for id, k := range heard {
				require.Equal(t, 1, k, "pool %s heard the gate %d times", id, k)
			}
			require.Equal(t, n, most, "a small cluster sends at once")
		})
	}
}

// A gate change while a fan-out runs cancels it and fans the newer gate
// out; a fan-out that fails starts again after fanoutRetryAfter, with the
// gate of that moment.
func TestGateFanoutIsSupersededAndStartsAgainAfterAFailure(t *testing.T) {
	env := newFanoutCluster()
	type call struct {
		at   time.Time
		gate contract.ClusterGate
	}
	var mu sync.Mutex
	var calls []call
	record := func(in activities.GateFanoutInput) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, call{env.Now(), in.Gate})
	}
	canceled := 0
	env.SetOnActivityCanceledListener(func(info *activity.Info) {
		if info.ActivityType.Name == "FanOutGate" {
			canceled++
		}
	})
	// The first outlasts the phase change (a mock's Run runs after its
	// wait, so that one is not recorded), the second fails for good.
	env.OnActivity(a.FanOutGate, mock.Anything, mock.Anything).After(time.Hour).Return(2500, nil).Once()
	env.OnActivity(a.FanOutGate, mock.Anything, mock.Anything).Run(func(args mock.Arguments) {
		record(args.Get(1).(activities.GateFanoutInput))
	}).Return(0, temporal.NewNonRetryableApplicationError("the server refused", "test", nil)).Once()
	env.OnActivity(a.FanOutGate, mock.Anything, mock.Anything).Run(func(args mock.Arguments) {
		record(args.Get(1).(activities.GateFanoutInput))
	}).Return(2500, nil)
	env.RegisterDelayedCallback(func() { watcherSees(env, true, "") }, time.Second)
	env.RegisterDelayedCallback(func() { setPhase(t, env, contract.PhaseDraining, func(contract.ClusterStatus) {}) }, 2*time.Second)
	endCluster(env, 100*time.Second) // before the observations go stale
	env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(contract.PhaseActive), State: unreachableState(2500)})
	requireCanceled(t, env)
	mu.Lock()
	defer mu.Unlock()
	env.AssertNumberOfCalls(t, "FanOutGate", 3)
	require.Equal(t, 1, canceled, "the fan-out of the gate before the phase change was not cancelled")
	require.Len(t, calls, 2, "fan-outs after the phase change: the failed one, its retry")
	for _, c := range calls {
		require.Equal(t, contract.PhaseDraining, c.gate.Phase, "a fan-out after the phase change")
		require.True(t, c.gate.Reachable)
	}
	require.GreaterOrEqual(t, calls[1].at.Sub(calls[0].at), fanoutRetryAfter, "the failed fan-out started again at once")
}

// A run that continues as new while its fan-out runs leaves the fan-out
// in its state, and the next run starts it again.
func TestGateFanoutContinuesInTheNextRun(t *testing.T) {
	env := newFanoutCluster()
	var mu sync.Mutex
	fanouts := 0
	env.OnActivity(a.FanOutGate, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.GateFanoutInput) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			fanouts++
			return 2500, nil
		})
	endCluster(env, time.Minute)
	st := unreachableState(2500)
	st.Fanout = &GateFanout{ByActivity: true}
	env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(contract.PhaseActive), State: st})
	requireCanceled(t, env)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, fanouts, "the carried fan-out was not started again (or twice)")
}

func newFanoutCluster() *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(ClusterWorkflow)
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.WatchCluster, mock.Anything, mock.Anything).After(1000 * time.Hour).Return(nil)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil)
	return env
}

// unreachableState is a cluster of n pools that were told it is active
// and not (yet) reachable: the state its next run starts from.
func unreachableState(n int) *ClusterState {
	pools := map[string]contract.PoolThresholds{}
	for i := range n {
		pools[fmt.Sprintf("pool/org%04d/web/api/sim/east", i)] = contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}
	}
	return &ClusterState{Declared: declared(contract.PhaseActive), Pools: pools,
		Gate: contract.ClusterGate{Phase: contract.PhaseActive, Region: "us-east"}}
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

// Registrations buffered together are taken together: more than a batch
// of pools joining at once hear the gate through FanOutGate, never one
// signal each (thousands buffered behind a slow task passed Temporal's
// 2,000 pending signals and failed it); a few still get a signal each.
func TestManyPoolsJoiningAtOnceHearTheGateThroughTheFanout(t *testing.T) {
	for _, n := range []int{3, 600} {
		t.Run(fmt.Sprint(n, " pools"), func(t *testing.T) {
			env := newFanoutCluster()
			var mu sync.Mutex
			signalled, fanouts := 0, 0
			env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, contract.SignalClusterGate, mock.Anything).Return(
				func(_, _, _, _ string, _ any) error {
					mu.Lock()
					defer mu.Unlock()
					signalled++
					return nil
				}).Maybe()
			env.OnActivity(a.FanOutGate, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.GateFanoutInput) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					require.True(t, in.Gate.Reachable)
					fanouts++
					return n, nil
				}).Maybe()
			// Reachable and told so: only the joining pools have a gate to hear.
			st := unreachableState(0)
			st.WatcherReachable, st.Observed.LastSyncAt, st.Gate.Reachable = true, t0, true
			env.SetStartTime(t0)
			// Sent before the first task, so all are buffered for it.
			env.RegisterDelayedCallback(func() {
				for id := range unreachableState(n).Pools {
					env.SignalWorkflow(contract.SignalPoolRegistered, contract.PoolRegistration{PoolID: id, Thresholds: contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}})
				}
			}, 0)
			registered := 0
			env.RegisterDelayedCallback(func() { registered = len(clusterStatus(t, env).Pools) }, 50*time.Second)
			endCluster(env, time.Minute)
			env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: declared(contract.PhaseActive), State: st})
			requireCanceled(t, env)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, n, registered, "pools registered")
			if n > gateFanoutBatch {
				require.Zero(t, signalled, "pools that joined together were signalled one by one")
				require.Equal(t, 1, fanouts)
				return
			}
			require.Equal(t, n, signalled)
			require.Zero(t, fanouts)
		})
	}
}
