package helm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	apitypes "k8s.io/apimachinery/pkg/types"
)

// The production values' platform worker, 3 replicas, is applied for real
// (server-side apply, as `helm install --server-side` or Argo CD does) to
// kube-apiserver: every object is stored, the Deployment keeps its 3
// replicas and its anti-affinity, and its PodDisruptionBudget selects
// exactly the Deployment's pods.
func TestRealAPIServerStoresTheWorkersWithTheirDisruptionBudget(t *testing.T) {
	ctx, api := startAPIServer(t)
	core := api.core

	const platform = releaseName + "-" + chartDir
	applied := map[string]int{}
	for _, m := range mustRender(t, "production.yaml", nil) {
		u := toUnstructured(t, m)
		body, err := json.Marshal(u.Object)
		require.NoError(t, err)
		force := true
		_, err = api.resource(t, m, u).Patch(ctx, u.GetName(), apitypes.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "helm", Force: &force, FieldValidation: "Strict"})
		require.NoError(t, err, "%s %s refused:\n%s", m.GVK.Kind, u.GetName(), m.YAML)
		applied[m.GVK.Kind]++
	}
	t.Logf("applied (server-side) to kube-apiserver: %v", applied)

	dep, err := core.AppsV1().Deployments(releaseNamespace).Get(ctx, platform, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, dep.Spec.Replicas)
	assert.Equal(t, int32(3), *dep.Spec.Replicas)
	aff := dep.Spec.Template.Spec.Affinity
	require.NotNil(t, aff, "the stored Deployment keeps the anti-affinity")
	require.NotNil(t, aff.PodAntiAffinity)
	terms := aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	require.Len(t, terms, 1)
	assert.Equal(t, corev1.LabelHostname, terms[0].PodAffinityTerm.TopologyKey)
	spread, err := metav1.LabelSelectorAsSelector(terms[0].PodAffinityTerm.LabelSelector)
	require.NoError(t, err)
	assert.True(t, spread.Matches(labels.Set(dep.Spec.Template.Labels)), "the anti-affinity names the worker's own pods")

	pdbs, err := core.PolicyV1().PodDisruptionBudgets(releaseNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	byName := map[string]policyv1.PodDisruptionBudget{}
	for _, p := range pdbs.Items {
		byName[p.Name] = p
	}
	_, ok := byName[platform]
	require.True(t, ok, "a PodDisruptionBudget for the 3-replica platform worker; have %v", byName)
	// Every Deployment of more than one replica has its own budget, which
	// covers its pods and no other's; one of a single replica has none (a
	// budget would block every drain).
	deps, err := core.AppsV1().Deployments(releaseNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, deps.Items, 3)
	budgeted := 0
	for _, d := range deps.Items {
		pdb, has := byName[d.Name]
		if d.Spec.Replicas == nil || *d.Spec.Replicas <= 1 {
			assert.False(t, has, "%s has one replica and a budget", d.Name)
			continue
		}
		require.True(t, has, "%s has %d replicas and no budget", d.Name, *d.Spec.Replicas)
		budgeted++
		require.NotNil(t, pdb.Spec.MaxUnavailable)
		assert.Equal(t, "1", pdb.Spec.MaxUnavailable.String())
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		require.NoError(t, err)
		for _, other := range deps.Items {
			assert.Equal(t, other.Name == d.Name, sel.Matches(labels.Set(other.Spec.Template.Labels)), "budget %s against %s's pods", d.Name, other.Name)
		}
	}
	assert.Len(t, pdbs.Items, budgeted)

	// Applied again unchanged, nothing moves: the same generation.
	again := mustRender(t, "production.yaml", nil)
	for _, m := range again {
		if m.GVK.Kind != "Deployment" || m.Object.(*appsv1.Deployment).Name != platform {
			continue
		}
		u := toUnstructured(t, m)
		body, err := json.Marshal(u.Object)
		require.NoError(t, err)
		force := true
		got, err := core.AppsV1().Deployments(releaseNamespace).Patch(ctx, platform, apitypes.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "helm", Force: &force})
		require.NoError(t, err)
		assert.Equal(t, dep.Generation, got.Generation, "re-applying the same chart changes nothing")
	}
}
