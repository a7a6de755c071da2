package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// world is a fake cluster the mocked activities read and write, so the
// workflow runs its real control law in the time-skipping environment.
type world struct {
	mu sync.Mutex
	// orgUsage answers ReadOrgUsage, called with mu held; nil: no usage, no limits.
	orgUsage func() activities.OrgUsage
	// orgUsageQueues are the task queues ReadOrgUsage ran on.
	orgUsageQueues []string
	// platformLimits answer PlatformOrgLimits (nil: the platform sets none).
	platformLimits     *types.OrgPolicy
	platformLimitReads int
	env                *testsuite.TestWorkflowEnvironment
	nodes              []types.NodeObservation
	pods               []types.PendingPod
	provisions         []activities.ProvisionInput
	boughtAt           []time.Time // when each provision was asked, on the workflow's clock
	drained            []string
	deleted            []string
	observed           int
	released           []activities.ReleaseInput
	meterEvents        []metering.Event
	// report, when set, replaces the default meter sink.
	report func(context.Context, []metering.Event) error
	// target is the provider's group target; machines beyond the nodes
	// are booting, launched at launchedAt.
	target     int
	launchedAt time.Time
	reads      int
	plans      []activities.PlanInput
	// leaked machines outside the group; collected lists what was taken.
	leaked    []activities.MachineState
	collected []string
	// planner, when set, replaces the stand-in plan below.
	planner func(activities.PlanInput) activities.PlanResult
	// provider, when set, is asked first on every Provision: an error is
	// the activity's answer (a real provider refusing the buy).
	provider func(context.Context, activities.ProvisionInput) error
	// provisionTakes is how long, on the workflow's clock, Provision runs.
	provisionTakes time.Duration
	// events the pool recorded on its pods and nodes.
	events []connectors.ClusterEvent
	// born: when each node's machine was launched, for nodes without a
	// CreatedAt; ended: the machines the provider terminated, with when
	// (setNodes, DeleteNode and ReleasePool note them).
	born  map[string]time.Time
	ended []activities.MachineState
	// down: the worker that observes and reads the provider is gone, so
	// those activities fail; noEndLog: the provider reports no ended
	// machines.
	down, noEndLog bool
	// capacity and zone are how the group is bought (empty: on demand,
	// the provider's zone).
	capacity types.CapacityType
	zone     string
	// drainErr, when set, answers each drain (nil: drained);
	// deletedAt: when each node was deleted.
	drainErr  func(activities.DrainInput) error
	deletedAt map[string]time.Time
	// groupOf, when set, splits the nodes into groups by ID (absent: g1),
	// machines still booting going to bootGroup, and a Provision that
	// names no group creates newGroup (pool_lifecycle_test.go).
	groupOf             map[string]string
	bootGroup, newGroup string
	// drainTakes is how long, on the workflow's clock, a drain runs; the
	// node is observed cordoned meanwhile. lingerFor is how long a
	// deleted node's Node object is still observed, as deleting (a
	// cloud's node lifecycle controller removes it later).
	drainTakes, lingerFor time.Duration
	lingering             []types.NodeObservation
	// draining and maxDraining: nodes cordoned or deleting now, and the
	// most observed at once.
	maxDraining int
	// buffers are the CapacityBuffers observed with the pool.
	buffers []types.BufferObservation
}

// gone is the error the observe and read activities answer while down.
func (w *world) gone() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down {
		return errors.New("activity StartToClose timeout: the worker is gone")
	}
	return nil
}

// setNodesLocked replaces the nodes as the provider would: machines of
// nodes that left end now, new ones are born now. Called with mu held.
func (w *world) setNodesLocked(nodes []types.NodeObservation) {
	now := w.env.Now()
	if w.born == nil {
		w.born = map[string]time.Time{}
	}
	keep := map[string]bool{}
	for _, n := range nodes {
		keep[n.Name] = true
		if _, ok := w.born[n.Name]; !ok && n.CreatedAt.IsZero() {
			w.born[n.Name] = now
		}
	}
	for _, n := range w.nodes {
		if !keep[n.Name] {
			w.ended = append(w.ended, activities.MachineState{ID: "i-" + n.Name, Name: n.Name, CreatedAt: w.createdLocked(n), EndedAt: now})
			delete(w.born, n.Name)
		}
	}
	w.nodes = nodes
}

func (w *world) createdLocked(n types.NodeObservation) time.Time {
	if !n.CreatedAt.IsZero() {
		return n.CreatedAt
	}
	return w.born[n.Name]
}

// view is the provider's account: one group whose instances are the
// nodes that joined plus the machines still booting.
func (w *world) view() activities.ProviderView {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	if w.groupOf != nil {
		return w.groupedViewLocked()
	}
	g := activities.GroupView{ID: "g1", Size: "sim-4c8g", Target: w.target, CapacityType: w.capacity, Zone: w.zone}
	for _, n := range w.nodes {
		g.Instances = append(g.Instances, activities.MachineState{ID: "i-" + n.Name, Name: n.Name, State: connectors.InstanceRunning, CreatedAt: w.createdLocked(n)})
	}
	for i := len(w.nodes); i < w.target; i++ {
		g.Instances = append(g.Instances, activities.MachineState{ID: fmt.Sprintf("i-boot-%d", i), Name: fmt.Sprintf("boot-%d", i), State: connectors.InstanceCreating, CreatedAt: w.launchedAt})
	}
	if !w.noEndLog {
		g.Ended = append([]activities.MachineState(nil), w.ended...)
	}
	return activities.ProviderView{ReadAt: w.env.Now(), Groups: []activities.GroupView{g}, Leaked: append([]activities.MachineState(nil), w.leaked...)}
}

func (w *world) observation() types.PoolObservation {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observed++
	nodes := append([]types.NodeObservation(nil), w.nodes...)
	kept := w.lingering[:0]
	for _, n := range w.lingering {
		if w.env.Now().Before(w.deletedAt[n.Name].Add(w.lingerFor)) {
			kept = append(kept, n)
			nodes = append(nodes, n)
		}
	}
	w.lingering = kept
	return types.PoolObservation{Pool: key(), ObservedAt: w.env.Now(), Nodes: nodes, PendingPods: append([]types.PendingPod(nil), w.pods...),
		Buffers: append([]types.BufferObservation(nil), w.buffers...)}
}

// plan stands in for the planner: one or two nodes for the pods, less the
// booting nodes of the size that would hold them; pods named nofit-* fit
// no size, gpu-* pods need the GPU size, which a plan with CPU pods in it
// leaves for the next decision.
func (w *world) plan(in activities.PlanInput) activities.PlanResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.plans = append(w.plans, in)
	if w.planner != nil {
		return w.planner(in)
	}
	res := activities.PlanResult{GroupID: "g1", GroupTarget: w.target}
	var cpu, gpu []types.PendingPod
	for _, pod := range in.Pods {
		switch {
		case strings.HasPrefix(pod.Name, "nofit-"):
			res.Unplaceable = append(res.Unplaceable, activities.UnplaceablePod{Pod: pod.Key(), Code: sizing.CodeNoFit, Reason: "nodeSelector disktype=nvme: no size in this pool has that label"})
		case strings.HasPrefix(pod.Name, "gpu-"):
			gpu = append(gpu, pod)
		default:
			cpu = append(cpu, pod)
		}
	}
	need := func(pods []types.PendingPod, size string) int {
		n := min(1, len(pods))
		if len(pods) > 2 {
			n = 2
		}
		for _, b := range in.Existing {
			if b.Size == size {
				n--
			}
		}
		return max(n, 0)
	}
	cpuNeed, gpuNeed := need(cpu, "sim-4c8g"), need(gpu, "sim-gpu")
	n, size := cpuNeed, "sim-4c8g"
	if cpuNeed == 0 && gpuNeed > 0 {
		n, size = gpuNeed, "sim-gpu"
	} else if gpuNeed > 0 {
		for _, pod := range gpu {
			res.Unplaceable = append(res.Unplaceable, activities.UnplaceablePod{Pod: pod.Key(), Code: sizing.CodeOtherSize, Reason: "fits sim-gpu, not sim-4c8g"})
		}
	}
	n = min(max(in.MinNewNodes, n), in.MaxNewNodes)
	if n > 0 {
		res.Size, res.NewNodes = size, n
	}
	return res
}

// setPods makes these the pending pods and signals an observation.
func (w *world) setPods(pods ...types.PendingPod) {
	w.mu.Lock()
	w.pods = pods
	w.mu.Unlock()
	w.signal()
}

func (w *world) signal() {
	w.env.SignalWorkflow(contract.SignalObserve, w.observation())
}

func newTestPool(t *testing.T, policy types.Policy, nodes []types.NodeObservation) (*testsuite.TestWorkflowEnvironment, *world) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(PoolWorkflow)
	env.RegisterActivity(&activities.Activities{})
	w := &world{env: env, nodes: nodes, target: len(nodes)}
	env.OnActivity(a.ReadProvider, mock.Anything, mock.Anything).Return(func(context.Context, types.PoolKey) (activities.ProviderView, error) {
		if err := w.gone(); err != nil {
			return activities.ProviderView{}, err
		}
		return w.view(), nil
	})
	env.OnActivity(a.Resync, mock.Anything, mock.Anything).Return(func(context.Context, types.PoolKey) (activities.ResyncResult, error) {
		if err := w.gone(); err != nil {
			return activities.ResyncResult{}, err
		}
		obs, view := w.observation(), w.view()
		return activities.ResyncResult{Observation: obs, View: &view}, nil
	})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(a.ObservePool, mock.Anything, mock.Anything).Return(func(context.Context, types.PoolKey) (types.PoolObservation, error) {
		if err := w.gone(); err != nil {
			return types.PoolObservation{}, err
		}
		return w.observation(), nil
	})
	env.OnActivity(a.PlanScaleUp, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PlanInput) (activities.PlanResult, error) {
		return w.plan(in), nil
	})
	env.OnActivity(a.PlatformOrgLimits, mock.Anything, mock.Anything).Return(func(context.Context, string) (*types.OrgPolicy, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.platformLimitReads++
		return w.platformLimits, nil
	})
	// The org's usage and the platform's limits: none unless a test sets orgUsage.
	env.OnActivity(a.ReadOrgUsage, mock.Anything, mock.Anything).Return(func(ctx context.Context, _ types.PoolKey) (activities.OrgUsage, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.orgUsageQueues = append(w.orgUsageQueues, activity.GetInfo(ctx).TaskQueue)
		if w.orgUsage == nil {
			return activities.OrgUsage{}, nil
		}
		return w.orgUsage(), nil
	})
	env.OnActivity(a.Provision, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.ProvisionInput) (activities.ProvisionResult, error) {
		if w.provider != nil {
			if err := w.provider(ctx, in); err != nil {
				return activities.ProvisionResult{}, err
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.provisions = append(w.provisions, in)
		w.boughtAt = append(w.boughtAt, w.env.Now())
		if in.Target > w.target {
			w.launchedAt = w.env.Now()
		}
		if w.groupOf != nil {
			return w.provisionGroupedLocked(in), nil
		}
		w.target = in.Target
		w.mu.Unlock()
		v := w.view()
		w.mu.Lock()
		return activities.ProvisionResult{GroupID: "g1", TotalTarget: in.Target, View: &v}, nil
	}).AfterFn(func() time.Duration {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.provisionTakes
	})
	env.OnActivity(a.DrainNode, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.DrainInput) (connectors.DrainResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.drained = append(w.drained, in.Node)
		if w.drainTakes > 0 {
			busy := 0
			for i := range w.nodes {
				if w.nodes[i].Name == in.Node {
					w.nodes[i].State = types.NodeCordoned
				}
				if w.nodes[i].State == types.NodeCordoned {
					busy++
				}
			}
			w.maxDraining = max(w.maxDraining, busy)
		}
		if w.drainErr != nil {
			if err := w.drainErr(in); err != nil {
				return connectors.DrainResult{}, err
			}
		}
		return connectors.DrainResult{Node: in.Node}, nil
	}).AfterFn(func() time.Duration {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.drainTakes
	})
	env.OnActivity(a.DeleteNode, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.DeleteInput) (activities.DeleteResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.deleted = append(w.deleted, in.Node)
		if w.deletedAt == nil {
			w.deletedAt = map[string]time.Time{}
		}
		w.deletedAt[in.Node] = w.env.Now()
		var kept []types.NodeObservation
		for _, n := range w.nodes {
			if n.Name != in.Node {
				kept = append(kept, n)
			} else if w.lingerFor > 0 {
				n.State = types.NodeDeleting
				w.lingering = append(w.lingering, n)
			}
		}
		if len(kept) < len(w.nodes) || w.target > len(w.nodes) {
			w.target--
		}
		w.setNodesLocked(kept)
		w.mu.Unlock()
		v := w.view()
		w.mu.Lock()
		return activities.DeleteResult{TotalTarget: v.Target(), View: &v}, nil
	})
	env.OnActivity(a.ReleasePool, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ReleaseInput) (activities.ReleaseResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.released = append(w.released, in)
		released := w.target
		w.target = 0
		w.setNodesLocked(nil)
		return activities.ReleaseResult{Groups: 1, Released: released}, nil
	})
	env.OnActivity(a.CollectLeaked, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.CollectInput) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.collected = append(w.collected, in.IDs...)
		w.leaked = nil
		return nil
	})
	env.OnActivity(a.RecordEvents, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.EventsInput) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.events = append(w.events, in.Events...)
		return nil
	})
	env.OnActivity(a.ReportMeter, mock.Anything, mock.Anything).Return(func(ctx context.Context, events []metering.Event) error {
		if w.report != nil {
			return w.report(ctx, events)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.meterEvents = append(w.meterEvents, events...)
		return nil
	})
	return env, w
}

func spec(p types.Policy) contract.PoolSpec { return contract.PoolSpec{Key: key(), Policy: p} }

// finish deregisters the pool at the given time so the test run ends.
func finish(env *testsuite.TestWorkflowEnvironment, at time.Duration) {
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateDeregister, "finish", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.DeregisterRequest{Reason: "test over"})
	}, at)
}

// runWithOneOverduePod runs the pool with one pod pending for an hour from
// its first second, deregisters it at finishAt, and requires no error.
func runWithOneOverduePod(t *testing.T, env *testsuite.TestWorkflowEnvironment, w *world, sp contract.PoolSpec, finishAt time.Duration) {
	t.Helper()
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("a", env.Now().Add(-time.Hour)))
	}, time.Second)
	finish(env, finishAt)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: sp})
	require.NoError(t, env.GetWorkflowError())
}

func status(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.PoolStatus {
	t.Helper()
	v, err := env.QueryWorkflow(contract.QueryStatus)
	require.NoError(t, err)
	var st contract.PoolStatus
	require.NoError(t, v.Get(&st))
	return st
}

func busyNodes() []types.NodeObservation {
	return []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8)}
}

func TestPoolScalesUpOnlyAfterPendingThreshold(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	// A run recorded before versionBatch: the threshold alone decides.
	env.OnGetVersion(versionBatch, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	var provisionedAt time.Time
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now()))
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.provisions, "scaled up before the pod waited 60s")
	}, time.Minute+59*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "no scale-up once the pod waited 60s")
		provisionedAt = env.Now()
	}, 2*time.Minute+time.Second)
	finish(env, 3*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(types.DefaultPolicy())})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.False(t, provisionedAt.IsZero())
	require.Equal(t, 3, w.provisions[0].Target, "absolute target = group target + new nodes")
	// The pool's incarnation (its first run's ID; the test run's here)
	// keeps a re-registered pool from reusing an earlier life's keys.
	require.Equal(t, connectors.IdempotencyKey("pool/acme/web/api/sim/east/default-test/1/provision-0"), w.provisions[0].IdempotencyKey)
}

// TestPoolBuysForABatchOncePodsStopArriving: with versionBatch a new
// run buys once its batch of pending pods closes, a second after the
// newest, not after the pending threshold.
func TestPoolBuysForABatchOncePodsStopArriving(t *testing.T) {
	env, w := newTestPool(t, types.DefaultPolicy(), busyNodes())
	env.RegisterDelayedCallback(func() { w.setPods(pending("p1", env.Now())) }, time.Minute)
	env.RegisterDelayedCallback(func() { w.setPods(pending("p1", env.Now().Add(-500*time.Millisecond)), pending("p2", env.Now())) }, time.Minute+500*time.Millisecond)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Empty(t, w.provisions, "bought while the batch was still arriving")
	}, time.Minute+900*time.Millisecond)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no purchase a second after the batch's newest pod")
		require.Len(t, w.plans[0].Pods, 2, "the batch was not sized as one")
	}, time.Minute+2*time.Second)
	finish(env, 2*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(types.DefaultPolicy())})
	require.NoError(t, env.GetWorkflowError())
}

func TestPoolScaleUpCooldown(t *testing.T) {
	p := withUpCooldown(types.DefaultPolicy())
	env, w := newTestPool(t, p, busyNodes())
	// Away from an hour's end: a run across one also reads the provider
	// for the meter, and failed here whenever the test ran just before the
	// hour; this test is about the cooldown alone.
	env.SetStartTime(time.Date(2026, 12, 2, 10, 10, 0, 0, time.UTC))
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now().Add(-2*time.Minute)))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		// The first node came up; a new pod went pending and is overdue.
		w.nodes = append(w.nodes, node("n3", 0.8, 0.8))
		w.pods = []types.PendingPod{pending("p2", env.Now().Add(-2*time.Minute))}
		w.mu.Unlock()
		w.signal()
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "scaled up inside the 5m cooldown")
	}, 5*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 2, "no scale-up once the cooldown ended")
	}, 5*time.Minute+2*time.Second)
	finish(env, 6*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestPoolIdleWindowBrokenByOneBusySample(t *testing.T) {
	p := types.DefaultPolicy()
	nodes := []types.NodeObservation{node("n1", 0.8, 0.8), node("n2", 0.8, 0.8), node("n3", 0.1, 0.1)}
	env, w := newTestPool(t, p, nodes)
	setN3 := func(cpu float64) func() {
		return func() {
			w.mu.Lock()
			w.nodes[2] = node("n3", cpu, 0.1)
			w.mu.Unlock()
			w.signal()
		}
	}
	// Idle from the start, busy for one sample at 6m, idle again at 6m30s.
	env.RegisterDelayedCallback(setN3(0.9), 6*time.Minute)
	env.RegisterDelayedCallback(setN3(0.1), 6*time.Minute+30*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.deleted, "removed although the idle window was broken at 6m")
	}, 16*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"n3"}, w.deleted, "idle node not removed 10m after the break")
	}, 17*time.Minute)
	finish(env, 18*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"n3"}, w.drained[:1], "drain comes before delete")
}

func TestPoolFloorAndCeiling(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 2, 3
	env, w := newTestPool(t, p, []types.NodeObservation{node("n1", 0.8, 0.8)})
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "below the floor and not grown")
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n2", 0.8, 0.8))
		w.pods = []types.PendingPod{pending("a", env.Now().Add(-time.Hour)), pending("b", env.Now().Add(-time.Hour)), pending("c", env.Now().Add(-time.Hour))}
		w.mu.Unlock()
		w.signal()
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n3", 0.8, 0.8))
		w.mu.Unlock()
		w.signal()
	}, 6*time.Minute)
	finish(env, 20*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 2)
	require.Equal(t, 2, w.provisions[0].Target, "floor: grow to 2")
	require.Equal(t, 3, w.provisions[1].Target, "three pods wanted 2 nodes, the ceiling allows 1")
}

func TestPoolPauseStopsActingButKeepsObserving(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdatePause, "pause", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("pause rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.PauseRequest{Reason: "maintenance", RequestedBy: "ops"})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now().Add(-time.Hour)))
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, w.provisions, "paused pool scaled up")
		st := status(t, env)
		require.True(t, st.Paused)
		require.Equal(t, 1, st.PendingPods, "paused pool stopped observing")
		require.Equal(t, "paused", st.State)
		env.UpdateWorkflow(contract.UpdateResume, "resume", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("resume rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.PauseRequest{})
	}, 3*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Len(t, w.provisions, 1, "resumed pool did not act")
	}, 3*time.Minute+time.Second)
	finish(env, 4*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestPoolValidatorsRejectWithFieldNamed(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	rejected := map[string]string{}
	reject := func(name string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { rejected[name] = err.Error() },
			OnAccept:   func() { t.Errorf("%s was accepted", name) },
			OnComplete: func(any, error) {},
		}
	}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateScale, "too-big", reject("too-big"), contract.ScaleRequest{Target: 51, Reason: "x"})
		env.UpdateWorkflow(contract.UpdateScale, "no-reason", reject("no-reason"), contract.ScaleRequest{Target: 3})
		bad := p
		bad.MinNodes, bad.MaxNodes = 10, 5
		env.UpdateWorkflow(contract.UpdateSetPolicy, "min-max", reject("min-max"), bad)
		neg := p
		neg.ScaleUpCooldown = types.Duration(-time.Minute)
		env.UpdateWorkflow(contract.UpdateSetPolicy, "negative", reject("negative"), neg)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, int64(0), st.Seq, "a rejected update changed the state")
		require.Equal(t, 50, st.Policy.MaxNodes)
	}, 2*time.Second)
	// A valid scale is accepted and carried out.
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateScale, "ok", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("valid scale rejected: %v", err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				require.Equal(t, 4, v.(contract.ScaleAccepted).Target)
			},
		}, contract.ScaleRequest{Target: 4, Reason: "launch", RequestedBy: "ops"})
	}, 3*time.Second)
	finish(env, time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Contains(t, rejected["too-big"], "target 51 is outside [minNodes 2, maxNodes 50]")
	require.Contains(t, rejected["no-reason"], "reason is empty")
	require.Contains(t, rejected["min-max"], "policy.minNodes")
	require.Contains(t, rejected["negative"], "policy.scaleUpCooldown")
	require.Len(t, w.provisions, 1)
	require.Equal(t, 4, w.provisions[0].Target)
}

func TestPoolForceScaleIsClamped(t *testing.T) {
	p := types.DefaultPolicy()
	p.MaxNodes = 3
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.SignalForceScale, contract.ScaleRequest{Target: 99, Reason: "burst", RequestedBy: "svc"})
	}, time.Second)
	finish(env, time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1)
	require.Equal(t, 3, w.provisions[0].Target, "force-scale not clamped to the ceiling")
}

func TestPoolRejectsBadObservation(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		bad := w.observation()
		bad.Pool.Org = "other"
		env.SignalWorkflow(contract.SignalObserve, bad)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Contains(t, st.LastRejected, "observation is for pool pool/other/web/api/sim/east")
		require.Equal(t, 2, st.Nodes)
	}, 2*time.Second)
	finish(env, time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

func TestPoolContinueAsNewKeepsState(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdatePause, "pause", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("pause rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.PauseRequest{Reason: "keep me"})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now()))
		// The server suggests Continue-As-New; the next wake-up must carry
		// everything into the new run.
		env.SetContinueAsNewSuggested(true)
		w.signal()
	}, time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next PoolInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.State)
	require.True(t, next.State.Paused, "paused flag lost")
	require.Equal(t, "keep me", next.State.PausedReason)
	require.Equal(t, 1, next.State.ContinuedAsNew)
	require.NotNil(t, next.State.Observation)
	require.Len(t, next.State.Observation.PendingPods, 1, "observation lost")
	require.Equal(t, key(), next.Spec.Key)
}

func TestDeregisterDrainsNodesThenReleasesMachinesStillBooting(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now().Add(-time.Hour)))
	}, time.Second)
	// Deregistered while the new machine is still booting (never observed).
	finish(env, 5*time.Second)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, w.provisions, 1)
	require.ElementsMatch(t, []string{"n1", "n2"}, w.drained, "observed nodes drained first")
	require.Len(t, w.released, 1, "machines still booting were not released")
	require.Contains(t, string(w.released[0].IdempotencyKey), "/release")
}
func TestNewRunsAskThePlannerForFewerNodes(t *testing.T) {
	p := types.DefaultPolicy()
	p.SizingObjective = types.SizingNodes
	env, w := newTestPool(t, p, busyNodes())
	runWithOneOverduePod(t, env, w, spec(p), time.Minute)
	require.NotEmpty(t, w.plans)
	require.True(t, w.plans[0].FewerNodes, "a run plans with poolcore.Rules.FewerNodes")
	require.Equal(t, types.SizingNodes, w.plans[0].Objective, "the policy's sizingObjective reaches the planner")
}
