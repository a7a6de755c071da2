package kubefake

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
)

func pod(name, node string, phase corev1.PodPhase, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: apitypes.UID(name + "-uid"), Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

func budget(name string, allowed int32, labels map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

func names(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestFieldSelectorsFilterLists(t *testing.T) {
	client, _ := NewClientset(Options{},
		pod("a", "n1", corev1.PodRunning, map[string]string{"app": "x"}),
		pod("b", "n1", corev1.PodSucceeded, nil),
		pod("c", "n2", corev1.PodRunning, map[string]string{"app": "x"}),
		pod("d", "", corev1.PodPending, map[string]string{"app": "x"}),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Unschedulable: true}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}},
	)
	ctx := context.Background()
	list := func(fieldSelector, labelSelector string) []string {
		l, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fieldSelector, LabelSelector: labelSelector})
		require.NoError(t, err)
		return names(l.Items)
	}
	assert.Equal(t, []string{"a"}, list("spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed", ""))
	assert.Equal(t, []string{"d"}, list("status.phase=Pending,spec.nodeName=", ""))
	assert.Equal(t, []string{"a", "c"}, list("spec.nodeName!=", "app=x"), "label selectors still apply")
	assert.Len(t, list("", ""), 4)

	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: "spec.unschedulable=false"})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 1)
	assert.Equal(t, "n2", nodes.Items[0].Name)

	_, err = client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.priority=5"})
	assert.True(t, apierrors.IsBadRequest(err), "unsupported field: %v", err)
}

func TestEvictionHonoursBudgetsAndPreconditions(t *testing.T) {
	client, fakes := NewClientset(Options{},
		pod("a", "n1", corev1.PodRunning, map[string]string{"app": "x"}),
		pod("b", "n1", corev1.PodRunning, map[string]string{"app": "x"}),
		pod("two", "n1", corev1.PodRunning, map[string]string{"app": "y", "tier": "z"}),
		budget("x", 1, map[string]string{"app": "x"}),
		budget("y", 1, map[string]string{"app": "y"}),
		budget("z", 1, map[string]string{"tier": "z"}),
	)
	ctx := context.Background()
	evict := func(name string, uid apitypes.UID) error {
		e := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		if uid != "" {
			e.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
		}
		return client.PolicyV1().Evictions("ns").Evict(ctx, e)
	}

	assert.True(t, apierrors.IsConflict(evict("a", "other-uid")), "UID precondition")
	require.NoError(t, evict("a", "a-uid"))
	err := evict("b", "")
	assert.True(t, apierrors.IsTooManyRequests(err), "budget spent: %v", err)
	assert.True(t, apierrors.IsNotFound(evict("a", "")), "already evicted")
	assert.True(t, apierrors.IsInternalError(evict("two", "")), "two budgets")

	pdb, err := client.PolicyV1().PodDisruptionBudgets("ns").Get(ctx, "x", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Zero(t, pdb.Status.DisruptionsAllowed)
	_, err = client.CoreV1().Pods("ns").Get(ctx, "a", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
	assert.Equal(t, 1, fakes.Evictions("ns", "a"))
	assert.Equal(t, 3, fakes.EvictionAttempts("ns", "a"))
	assert.Equal(t, 0, fakes.Evictions("ns", "b"))
}

func TestGracefulEvictionLeavesPodTerminating(t *testing.T) {
	client, fakes := NewClientset(Options{GracefulEviction: true}, pod("a", "n1", corev1.PodRunning, nil))
	ctx := context.Background()
	require.NoError(t, client.PolicyV1().Evictions("ns").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}))
	p, err := client.CoreV1().Pods("ns").Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotNil(t, p.DeletionTimestamp)

	gone, err := fakes.FinishTerminating()
	require.NoError(t, err)
	assert.Equal(t, 1, gone)
	_, err = client.CoreV1().Pods("ns").Get(ctx, "a", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
}
