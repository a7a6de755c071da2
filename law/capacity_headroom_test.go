package law

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

var acmeKey = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "east"}

func headroomPolicy() types.Policy {
	p := types.DefaultPolicy()
	p.Headroom = []types.Headroom{{Name: "web", Pods: 4, Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB}}}
	return p
}

// simNode is a Ready sim-4c8g (3800m, 7.5 GiB, 109 pods allocatable)
// with cpu millicores requested by pods of at most largest millicores.
func simNode(name string, cpu, largest int64) types.NodeObservation {
	alloc := catalogs.Sim()[1].Allocatable()
	return types.NodeObservation{
		Name: name, Size: "sim-4c8g", State: types.NodeReady,
		Allocatable: alloc,
		Requested:   types.Resources{MilliCPU: cpu, Memory: types.GiB, Pods: 2},
		LargestPod:  types.Resources{MilliCPU: largest, Memory: types.GiB / 2},
	}
}

func TestHeadroomPodsArePastAnyThresholdAndMarked(t *testing.T) {
	p := headroomPolicy()
	p.Headroom = append(p.Headroom, types.Headroom{Pods: 1, Requests: types.Resources{GPUs: 1},
		NodeSelector: map[string]string{"gpu": "a10"},
		Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}})
	require.NoError(t, p.Validate())
	pods := HeadroomPods(p, acmeKey)
	require.Len(t, pods, 5)
	keys := []string{}
	for _, pod := range pods {
		keys = append(keys, pod.Key())
		assert.True(t, pod.UnschedulableSince.IsZero())
		assert.True(t, IsHeadroomPod(pod))
		assert.Equal(t, "acme", pod.Org)
		assert.Equal(t, int64(1), pod.Requests.Pods, "each takes a pod slot")
		// Zero since means due at once under any threshold.
		assert.False(t, time.Now().Before(pod.UnschedulableSince.Add(p.PendingThreshold.D())))
	}
	assert.Equal(t, []string{"visor:headroom/web-0", "visor:headroom/web-1", "visor:headroom/web-2", "visor:headroom/web-3", "visor:headroom/shape1-0"}, keys)
	assert.Nil(t, pods[0].Scheduling)
	assert.Equal(t, map[string]string{"gpu": "a10"}, pods[4].Scheduling.NodeSelector)
	assert.False(t, IsHeadroomPod(types.PendingPod{Namespace: "web", Name: "x"}))
	assert.Empty(t, HeadroomPods(types.DefaultPolicy(), acmeKey))
}

func TestHeadroomShortfallIsWhatFreeRoomCannotHold(t *testing.T) {
	p := headroomPolicy() // 4 × 1 CPU
	catalog := catalogs.Sim()
	tmpl := sizing.TemplateOptions{}
	// Free room 2000m: two headroom pods fit, two are short.
	short := HeadroomShortfall(p, acmeKey, []types.NodeObservation{simNode("n1", 1800, 900)}, catalog, tmpl)
	assert.Len(t, short, 2)
	// Two such nodes hold all four.
	assert.Empty(t, HeadroomShortfall(p, acmeKey, []types.NodeObservation{simNode("n1", 1800, 900), simNode("n2", 1800, 900)}, catalog, tmpl))
	// No node at all: all four are demand, and the planner buys for them.
	short = HeadroomShortfall(p, acmeKey, nil, catalog, tmpl)
	require.Len(t, short, 4)
	plan := sizing.PlanScaleUp(sizing.Request{Pending: short, Catalog: catalog})
	assert.Positive(t, plan.NewNodes)
	assert.Empty(t, plan.Unplaceable)
	// Headroom that only a tainted pool's nodes could hold needs the toleration.
	tainted := sizing.TemplateOptions{Taints: []types.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}}}
	plan = sizing.PlanScaleUp(sizing.Request{Pending: HeadroomPods(p, acmeKey), Catalog: catalog, Template: tainted})
	assert.Len(t, plan.Unplaceable, 4, "untolerated taint")
}

func TestKeepsHeadroomRefusesARemovalThatTakesTheRoom(t *testing.T) {
	p := headroomPolicy()
	catalog := catalogs.Sim()
	nodes := []types.NodeObservation{simNode("n1", 1500, 900), simNode("n2", 1500, 900), simNode("n3", 200, 200)}
	// n3 is nearly empty: without it n1 and n2 (2300m free each) hold its
	// 200m pod and the four 1000m headroom pods.
	ok, why := KeepsHeadroom(p, acmeKey, nodes, []string{"n3"}, catalog, sizing.TemplateOptions{})
	assert.True(t, ok, why)
	// Without n2, n1's and n3's free room (2300m + 3600m) must take n2's
	// pods (as two of its largest, 900m) and four 1000m headroom pods: 5800m
	// in all, but packed per node one 900m pod is left over.
	ok, why = KeepsHeadroom(p, acmeKey, nodes, []string{"n2"}, catalog, sizing.TemplateOptions{})
	assert.False(t, ok)
	assert.Contains(t, why, "removing n2 leaves no room")
	// Far too little room left: the headroom pods themselves are named.
	ok, why = KeepsHeadroom(p, acmeKey, nodes, []string{"n2", "n3"}, catalog, sizing.TemplateOptions{})
	assert.False(t, ok)
	assert.Contains(t, why, "removing n2, n3 leaves no room for headroom web-")
	// A policy without headroom never objects.
	ok, _ = KeepsHeadroom(types.DefaultPolicy(), acmeKey, nodes, []string{"n1", "n2", "n3"}, catalog, sizing.TemplateOptions{})
	assert.True(t, ok)
}

func TestBufferPodsStandForEachBufferAndAreNeverPending(t *testing.T) {
	sched := &types.PodScheduling{NodeSelector: map[string]string{"disk": "ssd"}}
	buffers := []types.BufferObservation{
		{Namespace: "shop", Name: "web", Pods: 2, Requests: types.Resources{MilliCPU: 500, Memory: types.GiB}, Scheduling: sched},
		{Namespace: "shop", Name: "broken", Error: "podtemplate shop/missing not found"},
		{Namespace: "shop", Name: "cut", Pods: 1, Requests: types.Resources{MilliCPU: 100}, Error: "keeps room for 1 of its 5 pods"},
	}
	pods := BufferPods(buffers, acmeKey)
	keys := []string{}
	for _, pod := range pods {
		keys = append(keys, pod.Key())
		assert.True(t, IsHeadroomPod(pod), "a buffer pod is room kept, never a pending pod")
		assert.True(t, pod.UnschedulableSince.IsZero())
		assert.Equal(t, int64(1), pod.Requests.Pods)
		assert.Equal(t, "acme", pod.Org)
	}
	assert.Equal(t, []string{"visor:buffer/shop.web-0", "visor:buffer/shop.web-1", "visor:buffer/shop.cut-0"}, keys)
	assert.Equal(t, sched, pods[0].Scheduling)

	// Far more than the bound asks for: it stops at MaxBufferPods.
	huge := []types.BufferObservation{{Namespace: "a", Name: "b", Pods: 5 * types.MaxBufferPods, Requests: types.Resources{MilliCPU: 1}}}
	assert.Len(t, BufferPods(huge, acmeKey), types.MaxBufferPods)
}

func TestKeepsRoomForABufferAsForHeadroom(t *testing.T) {
	catalog := catalogs.Sim()
	nodes := []types.NodeObservation{simNode("n1", 1500, 900), simNode("n2", 1500, 900), simNode("n3", 200, 200)}
	buffer := BufferPods([]types.BufferObservation{{Namespace: "shop", Name: "web", Pods: 4, Requests: types.Resources{MilliCPU: 1000, Memory: types.GiB}}}, acmeKey)
	ok, why := KeepsRoomFor(buffer, nodes, []string{"n3"}, catalog, sizing.TemplateOptions{})
	assert.True(t, ok, why)
	ok, why = KeepsRoomFor(buffer, nodes, []string{"n2", "n3"}, catalog, sizing.TemplateOptions{})
	assert.False(t, ok)
	assert.Contains(t, why, "leaves no room for headroom shop.web-")
	// The free room holds two of the four: the other two are the shortfall.
	assert.Len(t, ShortfallOf(buffer, []types.NodeObservation{simNode("n1", 1800, 900)}, catalog, sizing.TemplateOptions{}), 2)
}

func TestAScaleUpForABufferSaysSo(t *testing.T) {
	in := DecisionInput{Policy: types.DefaultPolicy(), Now: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC), Rules: AllRules(),
		Observation: &types.PoolObservation{Pool: acmeKey, ObservedAt: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC),
			Nodes: []types.NodeObservation{simNode("n1", 3000, 900), simNode("n2", 3000, 900)}}}
	in.Gate.AllowScaleUp = true
	in.HeadroomShort = BufferPods([]types.BufferObservation{{Namespace: "shop", Name: "web", Pods: 2, Requests: types.Resources{MilliCPU: 1000}}}, acmeKey)
	d := Decide(in)
	require.Equal(t, ActionScaleUp, d.Action, d.Blocked)
	assert.Contains(t, d.Reason, "2 pods of them room kept for CapacityBuffers")
}
