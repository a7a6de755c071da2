package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/visor-fleet/connectors"
)

func TestProvisioningDelayKeepsNodesNotReadyUntilBooted(t *testing.T) {
	f, clock := newTestFleet(t, func(c *Config) { c.ProvisionDelay = 30 * time.Second })
	ctx := context.Background()
	pool := testPool("web")
	createGroup(t, f, pool, "sim-2c4g", 2, "k1")

	step(t, f, clock.Advance(29*time.Second))
	for _, n := range listNodes(t, f) {
		assert.False(t, nodeReady(&n), "%s is Ready before its delay", n.Name)
		assert.Equal(t, corev1.TaintNodeNotReady, n.Spec.Taints[0].Key)
	}
	groups, _ := f.NodeGroups(ctx, pool)
	assert.Equal(t, connectors.InstanceCreating, groups[0].Instances[0].State)

	step(t, f, clock.Advance(time.Second))
	for _, n := range listNodes(t, f) {
		assert.True(t, nodeReady(&n), "%s is Ready once booted", n.Name)
		assert.Empty(t, n.Spec.Taints)
	}
	groups, _ = f.NodeGroups(ctx, pool)
	assert.Equal(t, connectors.InstanceRunning, groups[0].Instances[0].State)
	assert.Equal(t, connectors.InstanceRunning, groups[0].Instances[1].State)
}

func TestSchedulerBindsFirstFitAndMarksTheRestUnschedulableOnce(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	ctx := context.Background()
	pool := testPool("web")
	// A sim-2c4g node has 1800m allocatable, less 50m for the agent: three
	// 500m pods fit, the rest wait.
	require.NoError(t, f.AddDemand(pool, Steady(5, smallPod)))
	step(t, f, clock.Now())
	pods := workloadPods(t, f, pool)
	require.Len(t, pods, 5)
	for _, p := range pods {
		c := podCondition(p, corev1.PodScheduled)
		require.NotNil(t, c, "%s has no PodScheduled condition", p.Name)
		assert.Equal(t, corev1.ConditionFalse, c.Status)
		assert.Equal(t, corev1.PodReasonUnschedulable, c.Reason)
		assert.True(t, c.LastTransitionTime.Time.Equal(t0))
		assert.Equal(t, corev1.PodPending, p.Status.Phase)
	}

	g := createGroup(t, f, pool, "sim-2c4g", 1, "k1")
	later := clock.Advance(45 * time.Second)
	step(t, f, later)
	pods = workloadPods(t, f, pool)
	bound, pending := countBound(pods)
	assert.Equal(t, 3, bound)
	assert.Equal(t, 2, pending)
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			assert.Equal(t, g.Instances[0].Name, p.Spec.NodeName)
			assert.Equal(t, corev1.PodRunning, p.Status.Phase)
			assert.Equal(t, corev1.ConditionTrue, podCondition(p, corev1.PodScheduled).Status)
			assert.Equal(t, corev1.ConditionTrue, podCondition(p, corev1.PodReady).Status)
			continue
		}
		c := podCondition(p, corev1.PodScheduled)
		assert.True(t, c.LastTransitionTime.Time.Equal(t0), "transition time stays when the pod first became unschedulable, got %s", c.LastTransitionTime)
	}
	agent, err := f.Clientset().CoreV1().Pods(agentNamespace).Get(ctx, agentName+"-"+g.Instances[0].Name, metav1.GetOptions{})
	require.NoError(t, err, "each Ready node runs the agent DaemonSet pod")
	assert.Equal(t, "DaemonSet", metav1.GetControllerOf(agent).Kind)

	// A second node takes the rest.
	require.NoError(t, f.SetTargetSize(ctx, g.ID, 2, "k2"))
	step(t, f, clock.Advance(time.Second))
	bound, pending = countBound(workloadPods(t, f, pool))
	assert.Equal(t, 5, bound)
	assert.Zero(t, pending)
}

func TestSchedulerSkipsCordonedNotReadyAndOtherPoolsNodes(t *testing.T) {
	f, clock := newTestFleet(t, func(c *Config) { c.ProvisionDelay = time.Minute })
	ctx := context.Background()
	web, api := testPool("web"), testPool("api")
	require.NoError(t, f.AddDemand(web, Steady(1, smallPod)))
	createGroup(t, f, api, "sim-2c4g", 1, "k1") // another pool's node
	g := createGroup(t, f, web, "sim-2c4g", 1, "k2")
	step(t, f, clock.Advance(30*time.Second))
	_, pending := countBound(workloadPods(t, f, web))
	assert.Equal(t, 1, pending, "a NotReady node takes no pods")

	// Cordon the pool's node as the drainer would, then let it boot.
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	_, err := f.Clientset().CoreV1().Nodes().Patch(ctx, g.Instances[0].Name, apitypes.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	step(t, f, clock.Advance(time.Minute))
	node, err := f.Clientset().CoreV1().Nodes().Get(ctx, g.Instances[0].Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, nodeReady(node))
	assert.True(t, node.Spec.Unschedulable, "booting does not undo a cordon")
	_, pending = countBound(workloadPods(t, f, web))
	assert.Equal(t, 1, pending, "neither a cordoned node nor another pool's node takes the pod")

	_, err = f.Clientset().CoreV1().Nodes().Patch(ctx, g.Instances[0].Name, apitypes.MergePatchType, []byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	step(t, f, clock.Advance(time.Second))
	bound, _ := countBound(workloadPods(t, f, web))
	assert.Equal(t, 1, bound)
}

func TestIdleStepWritesNothing(t *testing.T) {
	f, clock := newTestFleet(t, nil)
	pool := testPool("web")
	require.NoError(t, f.AddDemand(pool, Steady(3, smallPod)))
	createGroup(t, f, pool, "sim-2c4g", 2, "k1")
	step(t, f, clock.Now())
	step(t, f, clock.Advance(time.Second))
	before := f.writes.Load()
	for range 10 {
		step(t, f, clock.Advance(time.Second))
	}
	assert.Equal(t, before, f.writes.Load(), "a settled fleet makes no API writes")
}
