package workflows

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// groupedViewLocked is the provider's account when the world has several
// groups (world.groupOf). Called with mu held.
func (w *world) groupedViewLocked() activities.ProviderView {
	groups := map[string]*activities.GroupView{}
	var order []string
	get := func(id string) *activities.GroupView {
		if id == "" {
			id = "g1"
		}
		if g, ok := groups[id]; ok {
			return g
		}
		groups[id] = &activities.GroupView{ID: id, Size: "sim-4c8g", CapacityType: w.capacity}
		order = append(order, id)
		return groups[id]
	}
	get("g1")
	for _, n := range w.nodes {
		g := get(w.groupOf[n.Name])
		g.Instances = append(g.Instances, activities.MachineState{ID: "i-" + n.Name, Name: n.Name, State: connectors.InstanceRunning, CreatedAt: w.createdLocked(n)})
		g.Target++
	}
	for i := len(w.nodes); i < w.target; i++ {
		g := get(w.bootGroup)
		g.Instances = append(g.Instances, activities.MachineState{ID: fmt.Sprintf("i-boot-%d", i), Name: fmt.Sprintf("boot-%d", i), State: connectors.InstanceCreating, CreatedAt: w.launchedAt})
		g.Target++
	}
	v := activities.ProviderView{ReadAt: w.env.Now()}
	for _, id := range order {
		v.Groups = append(v.Groups, *groups[id])
	}
	return v
}

// provisionGroupedLocked sets one group's target (creating newGroup when
// the input names none); its new machines boot there.
func (w *world) provisionGroupedLocked(in activities.ProvisionInput) activities.ProvisionResult {
	id := in.GroupID
	if id == "" {
		id = w.newGroup
	}
	current := 0
	for _, g := range w.groupedViewLocked().Groups {
		if g.ID == id {
			current = g.Target
		}
	}
	if in.Target > current {
		w.launchedAt = w.env.Now()
		w.bootGroup = id
	}
	w.target += in.Target - current
	v := w.groupedViewLocked()
	return activities.ProvisionResult{GroupID: id, TotalTarget: v.Target(), View: &v}
}

// TestPoolDriftRollsThroughThePool: two busy nodes of group g1; a policy
// change gives the pool's nodes a label, so g1 (created without it) is
// drifted. Each old node is replaced in turn: a node of the new template
// bought first, in a new group under its own name (the drifted one holds
// the plain name), the old node drained only once the new one is Ready,
// and the second new node bought into that new group, never into g1.
func TestPoolDriftRollsThroughThePool(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.DisableConsolidation = true
	busy := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady, CreatedAt: time.Unix(0, 0),
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 3000, Memory: 6 * types.GiB, Pods: 3},
			LargestPod:  types.Resources{MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1}}
	}
	p.ExpireAfter = 0 // the nodes are from 1970: this test is about drift
	env, w := newTestPool(t, p, []types.NodeObservation{busy("n1"), busy("n2")})
	w.groupOf, w.newGroup = map[string]string{}, "g2"
	// A drained node's pods land on the newest node, as the scheduler
	// would put them on the only one with room.
	w.drainErr = func(in activities.DrainInput) error {
		var from types.Resources
		for _, n := range w.nodes {
			if n.Name == in.Node {
				from = n.Requested
			}
		}
		last := &w.nodes[len(w.nodes)-1]
		last.Requested = last.Requested.Add(from)
		return nil
	}
	changed := p
	changed.NodeLabels = map[string]string{"team": "checkout"}
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Zero(t, st.Drifted, "drifted before the policy changed: %v", st.Due)
		env.UpdateWorkflow(contract.UpdateSetPolicy, "label", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SetPolicyRequest{Policy: changed})
	}, time.Minute)
	// A new node of the new template joins g2 each time one is bought.
	joined := 0
	join := func() {
		w.mu.Lock()
		if w.target > len(w.nodes) {
			joined++
			name := fmt.Sprintf("new%d", joined)
			n := busy(name)
			n.CreatedAt, n.Requested, n.LargestPod = env.Now(), types.Resources{}, types.Resources{}
			n.Labels = map[string]string{"team": "checkout"}
			w.groupOf[name] = "g2"
			w.setNodesLocked(append(w.nodes, n))
		}
		w.mu.Unlock()
		w.signal()
	}
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no replacement bought for the first drifted node")
		in := w.provisions[0]
		require.Empty(t, in.GroupID, "the replacement grew the drifted group")
		require.Equal(t, "-t"+changed.TemplateHash()[:poolcore.GroupSuffixLen], in.GroupSuffix)
		require.Equal(t, changed.NodeLabels, in.NodeLabels)
		require.Empty(t, w.drained, "drained before the new node is Ready")
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 2, st.Drifted, "status: %v", st.Due)
		require.Contains(t, strings.Join(st.Due, "\n"), "another node template")
	}, 2*time.Minute+time.Second)
	env.RegisterDelayedCallback(join, 3*time.Minute)
	// The watcher sees the drained node gone and its pods moved.
	env.RegisterDelayedCallback(w.signal, 3*time.Minute+30*time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.drained, 1, "the first drifted node not drained once its replacement was Ready")
		require.Len(t, w.provisions, 2, "the second drifted node's replacement not bought")
		require.Equal(t, "g2", w.provisions[1].GroupID, "the second replacement did not grow the new template's group")
	}, 4*time.Minute)
	env.RegisterDelayedCallback(join, 5*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		drained := append([]string(nil), w.drained...)
		w.mu.Unlock()
		require.ElementsMatch(t, []string{"n1", "n2"}, drained)
		st := status(t, env)
		require.Zero(t, st.Drifted, "still drifted after the roll: %v", st.Due)
	}, 6*time.Minute)
	finish(env, 7*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	var log []string
	for _, d := range status(t, env).Decisions {
		log = append(log, d.Action+": "+d.Reason)
	}
	require.Contains(t, strings.Join(log, "\n"), "disrupt: lifecycle: n1 drifted")
}

// TestPoolExpiredNodeHeldPastGraceIsForced: n1 expires an hour in; a
// do-not-disrupt pod keeps it until terminationGracePeriod (10m) after it
// was first due, then it is drained as far as the drain goes (here a
// PodDisruptionBudget refuses) and deleted; n2 holds its pods throughout.
func TestPoolExpiredNodeHeldPastGraceIsForced(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.DisableConsolidation = true
	p.ExpireAfter = types.Duration(time.Hour)
	p.TerminationGracePeriod = types.Duration(10 * time.Minute)
	p.ResyncInterval = types.Duration(time.Minute)
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	mk := func(name string, cpu int64, created time.Time) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady, CreatedAt: created,
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: cpu, Memory: types.GiB, Pods: 1},
			LargestPod:  types.Resources{MilliCPU: cpu, Memory: types.GiB, Pods: 1}}
	}
	n1 := mk("n1", 500, start.Add(-50*time.Minute))
	n1.DrainBlockers = []string{"pod default/batch: do-not-disrupt"}
	env, w := newTestPool(t, p, []types.NodeObservation{n1, mk("n2", 3000, start.Add(10*time.Minute))})
	env.SetStartTime(start)
	w.drainErr = func(in activities.DrainInput) error {
		if in.Node == "n1" {
			return fmt.Errorf("cannot evict pod default/web-0: PodDisruptionBudget web allows no disruption")
		}
		return nil
	}
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 1, st.Expired, "n1 not counted expired: %v", st.Due)
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Empty(t, w.deleted, "n1 deleted within its grace period")
	}, 18*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Equal(t, []string{"n1"}, w.deleted, "n1 not deleted once its grace period was over")
		require.Contains(t, w.drained, "n1", "n1 deleted without a drain first")
		require.Empty(t, w.provisions, "bought a node although n2 holds n1's pods")
	}, 25*time.Minute)
	finish(env, 26*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	var log []string
	for _, d := range status(t, env).Decisions {
		log = append(log, d.Action+": "+d.Reason+" -> "+d.Outcome)
	}
	require.Contains(t, strings.Join(log, "\n"), "past terminationGracePeriod")
}

// TestPoolRepairAfterDriftBuysTheCurrentTemplate: the pool is at its
// ceiling, so its drifted nodes wait; n1 goes NotReady and is repaired,
// and its replacement is of the current template (a new group), not one
// more node of the drifted group.
func TestPoolRepairAfterDriftBuysTheCurrentTemplate(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes, p.MaxNodes = 1, 2
	p.DisableConsolidation = true
	p.ExpireAfter = 0
	busy := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady,
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 3000, Memory: 6 * types.GiB, Pods: 3}}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{busy("n1"), busy("n2")})
	w.groupOf, w.newGroup = map[string]string{}, "g2"
	changed := p
	changed.NodeTaints = []types.Taint{{Key: "dedicated", Value: "web", Effect: "NoSchedule"}}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateSetPolicy, "taint", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SetPolicyRequest{Policy: changed})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, 2, st.Drifted)
		require.Contains(t, strings.Join(st.Blocked, ";"), "ceiling", "drifted nodes replaced past the ceiling")
		w.mu.Lock()
		w.nodes[0].State = types.NodeNotReady
		require.Empty(t, w.provisions)
		w.mu.Unlock()
		w.signal()
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Contains(t, w.deleted, "n1", "n1 not repaired")
		require.Len(t, w.provisions, 1)
		in := w.provisions[0]
		require.Empty(t, in.GroupID, "the repair grew the drifted group")
		require.Equal(t, changed.NodeTaints, in.NodeTaints)
		require.Equal(t, "-t"+changed.TemplateHash()[:poolcore.GroupSuffixLen], in.GroupSuffix)
	}, 30*time.Minute)
	finish(env, 31*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

// A drift under way survives Continue-As-New (and so a restart): the
// renewal in flight, the groups' templates and the due clocks travel in
// the state, so the next run drains the old node once and buys nothing
// twice.
func TestPoolDriftStateCarriedAcrossContinueAsNew(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.DisableConsolidation = true
	p.ExpireAfter = 0
	busy := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady,
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 3000, Memory: 6 * types.GiB, Pods: 3}}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{busy("n1"), busy("n2")})
	w.groupOf, w.newGroup = map[string]string{}, "g2"
	changed := p
	changed.NodeLabels = map[string]string{"team": "checkout"}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateSetPolicy, "label", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SetPolicyRequest{Policy: changed})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SetContinueAsNewSuggested(true)
		w.signal()
	}, 2*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next PoolInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	s := next.State
	require.NotNil(t, s)
	require.NotNil(t, s.Replacing, "the renewal in flight was lost")
	require.Contains(t, s.Replacing.Lifecycle, "drifted")
	require.Equal(t, p.TemplateHash(), s.GroupTemplates["g1"], "g1's template lost")
	require.Equal(t, changed.TemplateHash(), s.GroupTemplates["g2"], "the new group's template lost")
	require.Contains(t, s.DueSince, "n1")
	require.Contains(t, s.DueSince, "n2")
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Len(t, w.provisions, 1, "more than one renewal bought")
}

// With maxDrainingNodes 2 both drifted nodes are renewed together: one
// purchase of two nodes, both old nodes drained once both are Ready.
func TestPoolDriftRenewsTogetherWithinTheBudget(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.DisableConsolidation = true
	p.ExpireAfter = 0
	p.Disruption = &types.DisruptionBudget{MaxDrainingNodes: 2}
	busy := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady,
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 3000, Memory: 6 * types.GiB, Pods: 3}}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{busy("n1"), busy("n2")})
	w.groupOf, w.newGroup = map[string]string{}, "g2"
	changed := p
	changed.NodeLabels = map[string]string{"team": "checkout"}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateSetPolicy, "label", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SetPolicyRequest{Policy: changed})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1)
		require.Equal(t, 2, w.provisions[0].Target, "not one purchase of two nodes")
		for i := 1; i <= 2; i++ {
			n := busy(fmt.Sprintf("new%d", i))
			n.CreatedAt, n.Requested = env.Now(), types.Resources{}
			w.groupOf[n.Name] = "g2"
			w.nodes = append(w.nodes, n)
		}
	}, 2*time.Minute)
	env.RegisterDelayedCallback(w.signal, 2*time.Minute+time.Second)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.ElementsMatch(t, []string{"n1", "n2"}, w.drained)
		require.Len(t, w.provisions, 1, "bought again")
	}, 4*time.Minute)
	finish(env, 5*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
}

// lifecycleRefused runs two busy drifted nodes whose first renewal's new
// node joins at 2m, while a PodDisruptionBudget refuses n1's drain until
// allowAt; it returns how often n1's drain was tried by checkAt, the
// DisruptionBlocked Events n1 got by then, and the status then.
func lifecycleRefused(t *testing.T, oldRun bool, checkAt, allowAt, end time.Duration, after func(w *world)) (tries, events int, st contract.PoolStatus) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.DisableConsolidation = true
	p.ExpireAfter = 0
	busy := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady,
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 3000, Memory: 6 * types.GiB, Pods: 3}}
	}
	env, w := newTestPool(t, p, []types.NodeObservation{busy("n1"), busy("n2")})
	if oldRun {
		env.OnGetVersion(changeLifecycleRetry, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	}
	w.groupOf, w.newGroup = map[string]string{}, "g2"
	var mu sync.Mutex
	allows := false
	w.drainErr = func(in activities.DrainInput) error {
		mu.Lock()
		defer mu.Unlock()
		if in.Node == "n1" && !allows {
			return errors.New("drain refused: web/a: its PodDisruptionBudget allows no disruption now")
		}
		return nil
	}
	changed := p
	changed.NodeLabels = map[string]string{"team": "checkout"}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateSetPolicy, "label", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SetPolicyRequest{Policy: changed})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Len(t, w.provisions, 1, "no renewal bought")
		n := busy("new1")
		n.CreatedAt, n.Requested = env.Now(), types.Resources{}
		w.groupOf[n.Name] = "g2"
		w.nodes = append(w.nodes, n)
	}, 2*time.Minute)
	watch(env, w, 30*time.Second, end)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		for _, n := range w.drained {
			if n == "n1" {
				tries++
			}
		}
		w.mu.Unlock()
		events = blockedEvents(w)["n1"]
		st = status(t, env)
		mu.Lock()
		allows = true
		mu.Unlock()
	}, checkAt)
	if after != nil {
		env.RegisterDelayedCallback(func() { after(w) }, allowAt)
	}
	finish(env, end)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	return tries, events, st
}

// A drifted node whose drain a PodDisruptionBudget refuses, its new node
// Ready, is retried as an idle node's refused drain is: with a backoff,
// one DisruptionBlocked Event however often it is retried, the refusal in
// status.drainBlocked, and drained at the first retry once the budget
// allows it.
func TestPoolLifecycleRefusedDrainRetriesWithBackoff(t *testing.T) {
	allowAt := 8 * time.Minute
	tries, events, st := lifecycleRefused(t, false, allowAt, allowAt+poolcore.MaxRetrySamples*30*time.Second+time.Second, 10*time.Minute, func(w *world) {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Contains(t, w.deleted, "n1", "n1 not drained at the first retry after its budget allowed it")
	})
	// Each drain is three activity attempts; 6 minutes of 30 s decisions
	// would be 12 drains, the backoff (30 s, 1m, 2m, 2m, …) makes 5.
	require.GreaterOrEqual(t, tries, 3*3, "the refused drain was not retried")
	require.LessOrEqual(t, tries, 3*7, "retried at every decision, not with a backoff")
	require.Equal(t, 1, events, "one Event per retry, not one per reason")
	require.Contains(t, st.DrainBlocked["n1"], "PodDisruptionBudget", "status.drainBlocked: %v", st.DrainBlocked)
	require.Contains(t, strings.Join(st.SkippedNodes, ";"), "n1: its drain failed, retried at")
}

// A run recorded before lifecycle-retry tells an Event per failed drain.
func TestPoolLifecycleRefusedDrainOnlyFromItsChangeID(t *testing.T) {
	tries, events, _ := lifecycleRefused(t, true, 8*time.Minute, 0, 9*time.Minute, nil)
	require.Greater(t, events, 1, "the old run told one Event per reason")
	require.Greater(t, tries, 3*7, "the old run retried with a backoff")
}

// taintDrift: a policy change at 1m adds a NoSchedule taint to two busy
// nodes' template; n1's pods do not tolerate it, n2's do. It returns the
// status at 3m (after one renewal was bought) and the decisions.
func taintDrift(t *testing.T, oldRun bool) (contract.PoolStatus, []string) {
	p := types.DefaultPolicy()
	p.MinNodes = 1
	p.DisableConsolidation = true
	p.ExpireAfter = 0
	busy := func(name string) types.NodeObservation {
		return types.NodeObservation{Name: name, Size: "sim-4c8g", State: types.NodeReady,
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: 3000, Memory: 6 * types.GiB, Pods: 3}}
	}
	n1, n2 := busy("n1"), busy("n2")
	n1.PodTolerations = []types.PodTolerations{{Pod: "shop/cart-0", Count: 3}}
	n2.PodTolerations = []types.PodTolerations{{Pod: "web/api-0", Count: 3, Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}}}}
	env, w := newTestPool(t, p, []types.NodeObservation{n1, n2})
	if oldRun {
		env.OnGetVersion(changeRenewalTolerations, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	}
	w.groupOf, w.newGroup = map[string]string{}, "g2"
	changed := p
	changed.NodeTaints = []types.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateSetPolicy, "taint", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SetPolicyRequest{Policy: changed})
	}, time.Minute)
	watch(env, w, 30*time.Second, 4*time.Minute)
	var st contract.PoolStatus
	env.RegisterDelayedCallback(func() { st = status(t, env) }, 3*time.Minute)
	finish(env, 4*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	var log []string
	for _, d := range st.Decisions {
		log = append(log, d.Action+": "+d.Reason+" -> "+d.Outcome)
	}
	return st, log
}

// A drift that adds a taint renews only the node whose pods tolerate it;
// the other is kept and the status says which pods and which taint.
func TestPoolTaintDriftKeepsANodeWhosePodsDoNotTolerateIt(t *testing.T) {
	st, log := taintDrift(t, false)
	require.Equal(t, 2, st.Drifted)
	all := strings.Join(log, "\n")
	require.Contains(t, all, "disrupt: lifecycle: n2 drifted", "n2, whose pods tolerate the taint, not renewed")
	require.NotContains(t, all, "lifecycle: n1 drifted", "n1 renewed although its pods do not tolerate the taint")
	require.Contains(t, strings.Join(st.Due, "\n"),
		"; kept: 3 pods (shop/cart-0) do not tolerate taint dedicated=web:NoSchedule of the current node template")
}

// A run recorded before renewal-tolerations renews n1 first, by name.
func TestPoolTaintDriftOnlyFromItsChangeID(t *testing.T) {
	_, log := taintDrift(t, true)
	require.Contains(t, strings.Join(log, "\n"), "disrupt: lifecycle: n1 drifted")
}
