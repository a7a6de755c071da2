package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/visor-fleet/types"
)

var bufferGVR = schema.GroupVersionResource{Group: BufferGroup, Version: "v1beta1", Resource: BufferResource}

func buffer(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": BufferGroup + "/v1beta1", "kind": "CapacityBuffer",
		"metadata": map[string]any{"namespace": ns, "name": name, "generation": int64(2)},
		"spec":     spec,
	}}
}

func podTemplate(ns, name string, labels map[string]string, cpu string) *corev1.PodTemplate {
	return &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"disk": "ssd"},
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi"),
				}}}},
			},
		},
	}
}

var apiLabels = map[string]string{types.LabelOrg: "acme", types.LabelProject: "shop", types.LabelService: "api"}

// bufferCluster is a cluster serving the API (when served) with the
// given core objects and buffers, and a clock the test moves.
func bufferCluster(t *testing.T, served bool, core []runtime.Object, buffers ...*unstructured.Unstructured) (*Observer, *fake.Clientset, *dynamicfake.FakeDynamicClient, *time.Time) {
	t.Helper()
	cs := fake.NewSimpleClientset(core...)
	if served {
		cs.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
			GroupVersion: BufferGroup + "/v1beta1", APIResources: []metav1.APIResource{{Name: BufferResource, Namespaced: true, Kind: "CapacityBuffer"}},
		}}
	}
	objs := make([]runtime.Object, len(buffers))
	for i, b := range buffers {
		objs[i] = b
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{bufferGVR: "CapacityBufferList"}, objs...)
	now := observedAt
	cfg := observerConfig(nil)
	cfg.Now = func() time.Time { return now }
	cfg.Dynamic = dyn
	return NewObserver(cs, cfg), cs, dyn, &now
}

func readyCondition(t *testing.T, dyn *dynamicfake.FakeDynamicClient, ns, name string) (*metav1.Condition, bufferStatus) {
	t.Helper()
	u, err := dyn.Resource(bufferGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	var cb capacityBuffer
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cb))
	return meta.FindStatusCondition(cb.Status.Conditions, ConditionReadyForProvisioning), cb.Status
}

func TestBuffersBecomeTheirPoolsHeadroomAndSayWhyNot(t *testing.T) {
	replicas := int32(10)
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: podTemplate("", "", apiLabels, "250m").Template}}
	core := []runtime.Object{
		newNode("n1", apiPool.NodePoolLabel()),
		podTemplate("shop", "web", apiLabels, "500m"),
		podTemplate("shop", "nolabels", nil, "500m"),
		podTemplate("shop", "infer", map[string]string{types.LabelOrg: "acme", types.LabelProject: "shop", types.LabelService: "infer"}, "1"),
		deploy,
	}
	o, cs, dyn, _ := bufferCluster(t, true, core,
		buffer("shop", "fixed", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "replicas": int64(3)}),
		buffer("shop", "missing", map[string]any{"podTemplateRef": map[string]any{"name": "gone"}, "replicas": int64(1)}),
		buffer("shop", "negative", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "replicas": int64(-2)}),
		buffer("shop", "huge", map[string]any{"podTemplateRef": map[string]any{"name": "infer"}, "replicas": int64(1_000_000)}),
		buffer("shop", "share", map[string]any{"scalableRef": map[string]any{"apiGroup": "apps", "kind": "Deployment", "name": "web"}, "percentage": int64(20)}),
		buffer("shop", "limited", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "limits": map[string]any{"cpu": "4"}}),
		buffer("shop", "tenantless", map[string]any{"podTemplateRef": map[string]any{"name": "nolabels"}, "replicas": int64(1)}),
		buffer("shop", "passive", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "replicas": int64(5), "provisioningStrategy": "example.com/other"}),
	)
	obs, err := o.ObserveCluster(context.Background())
	require.NoError(t, err)
	gets := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "podtemplates" {
			gets++
		}
	}
	assert.Equal(t, 4, gets, "one read per template a sample needs (web, gone, infer, nolabels)")
	api := obs.Pools[apiPool.WorkflowID()]
	got := map[string]types.BufferObservation{}
	for _, b := range api.Buffers {
		got[b.Name] = b
	}
	assert.NotContains(t, got, "passive", "another strategy's buffer is not the pools'")
	assert.NotContains(t, got, "tenantless", "no pool is named by its template")

	fixed := got["fixed"]
	assert.Equal(t, 3, fixed.Pods)
	assert.Empty(t, fixed.Error)
	assert.Equal(t, int64(500), fixed.Requests.MilliCPU)
	assert.Equal(t, int64(1), fixed.Requests.Pods)
	require.NotNil(t, fixed.Scheduling)
	assert.Equal(t, map[string]string{"disk": "ssd"}, fixed.Scheduling.NodeSelector)

	// Without its template no pool can be named: the error is in the
	// buffer's status only. With it, the pool shows the error too.
	assert.NotContains(t, got, "missing")
	assert.Equal(t, 0, got["negative"].Pods)
	assert.Contains(t, got["negative"].Error, "spec.replicas must be >= 0, got -2")
	infer := obs.Pools[inferPool.WorkflowID()].Buffers
	require.Len(t, infer, 1, "a buffer of the infer pool's template")
	assert.Equal(t, types.MaxBufferPods, infer[0].Pods)
	assert.Contains(t, infer[0].Error, "asks for 1000000 pods, kept at 1000")
	assert.Equal(t, 2, got["share"].Pods, "20% of the deployment's 10 replicas")
	assert.Equal(t, int64(250), got["share"].Requests.MilliCPU, "the deployment's pod shape")
	assert.Equal(t, 8, got["limited"].Pods, "4 CPUs of 500m pods")

	// Each buffer's status says what became of it, as CA's controller writes it.
	c, st := readyCondition(t, dyn, "shop", "fixed")
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Contains(t, c.Message, "3 pods of")
	assert.Contains(t, c.Message, apiPool.WorkflowID())
	assert.Equal(t, int64(2), c.ObservedGeneration)
	require.NotNil(t, st.Replicas)
	assert.Equal(t, int32(3), *st.Replicas)
	assert.Equal(t, "web", st.PodTemplateRef.Name)
	assert.Equal(t, ActiveCapacity, *st.ProvisioningStrategy)
	for name, want := range map[string]string{
		"missing":    "podtemplate shop/gone",
		"negative":   "spec.replicas must be >= 0",
		"tenantless": "the pod template's labels name no pool",
	} {
		c, _ := readyCondition(t, dyn, "shop", name)
		require.NotNil(t, c, name)
		assert.Equal(t, metav1.ConditionFalse, c.Status, name)
		assert.Equal(t, reasonBufferInvalid, c.Reason, name)
		assert.Contains(t, c.Message, want, name)
	}
	c, _ = readyCondition(t, dyn, "shop", "passive")
	assert.Nil(t, c, "another strategy's buffer was written to")

	// The same cluster again: nothing changed, so no status is written.
	writes := func() int {
		n := 0
		for _, a := range dyn.Actions() {
			if a.GetVerb() == "update" {
				n++
			}
		}
		return n
	}
	before := writes()
	_, err = o.ObserveCluster(context.Background())
	require.NoError(t, err)
	assert.Equal(t, before, writes(), "an unchanged status was written again")
}

// A cluster without the API observes as before and asks discovery again
// only every few minutes; once the CRD is installed its buffers are read.
func TestAClusterWithoutTheBufferAPIIsObservedUnchanged(t *testing.T) {
	core := []runtime.Object{newNode("n1", apiPool.NodePoolLabel()), podTemplate("shop", "web", apiLabels, "500m")}
	o, cs, _, now := bufferCluster(t, false, core,
		buffer("shop", "fixed", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "replicas": int64(3)}))
	discoveries := func() int {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetResource().Resource == "resource" {
				n++
			}
		}
		return n
	}
	for range 5 {
		obs, err := o.ObserveCluster(context.Background())
		require.NoError(t, err)
		assert.Empty(t, obs.Pools[apiPool.WorkflowID()].Buffers)
		assert.Len(t, obs.Pools[apiPool.WorkflowID()].Nodes, 1)
	}
	assert.Equal(t, len(BufferVersions), discoveries(), "discovery asked at every sample")

	cs.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: BufferGroup + "/v1beta1", APIResources: []metav1.APIResource{{Name: BufferResource}},
	}}
	*now = now.Add(bufferRediscover)
	obs, err := o.ObserveCluster(context.Background())
	require.NoError(t, err)
	require.Len(t, obs.Pools[apiPool.WorkflowID()].Buffers, 1, "the API installed later is read")
	assert.Equal(t, 3, obs.Pools[apiPool.WorkflowID()].Buffers[0].Pods)
}

// A cluster serving only v1alpha1 (an older cluster-autoscaler's CRD) is
// read through it: the schema is the same.
func TestBuffersAreReadThroughV1alpha1WhenOnlyItIsServed(t *testing.T) {
	alpha := schema.GroupVersionResource{Group: BufferGroup, Version: "v1alpha1", Resource: BufferResource}
	cs := fake.NewSimpleClientset(newNode("n1", apiPool.NodePoolLabel()), podTemplate("shop", "web", apiLabels, "500m"))
	cs.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: BufferGroup + "/v1alpha1", APIResources: []metav1.APIResource{{Name: BufferResource}},
	}}
	b := buffer("shop", "old", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "replicas": int64(2)})
	b.SetAPIVersion(BufferGroup + "/v1alpha1")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{alpha: "CapacityBufferList"}, b)
	cfg := observerConfig(nil)
	cfg.Dynamic = dyn
	obs, err := NewObserver(cs, cfg).ObserveCluster(context.Background())
	require.NoError(t, err)
	got := obs.Pools[apiPool.WorkflowID()].Buffers
	require.Len(t, got, 1)
	assert.Equal(t, 2, got[0].Pods)
}

// A watcher whose role may not write buffer status still reads the
// buffers, says why in BufferError, and stops asking for statusPause
// instead of writing at every sample.
func TestAForbiddenStatusWriteKeepsTheBuffersAndPausesWrites(t *testing.T) {
	core := []runtime.Object{newNode("n1", apiPool.NodePoolLabel()), podTemplate("shop", "web", apiLabels, "500m")}
	o, _, dyn, now := bufferCluster(t, true, core,
		buffer("shop", "fixed", map[string]any{"podTemplateRef": map[string]any{"name": "web"}, "replicas": int64(3)}))
	updates := 0
	dyn.PrependReactor("update", BufferResource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		updates++
		return true, nil, apierrors.NewForbidden(bufferGVR.GroupResource(), "fixed", errors.New("no update on capacitybuffers/status"))
	})
	for range 3 {
		obs, err := o.ObserveCluster(context.Background())
		require.NoError(t, err)
		require.Len(t, obs.Pools[apiPool.WorkflowID()].Buffers, 1)
		assert.Equal(t, 3, obs.Pools[apiPool.WorkflowID()].Buffers[0].Pods)
	}
	assert.Equal(t, 1, updates, "a forbidden write was tried again within the pause")
	require.Error(t, o.BufferError())
	assert.True(t, apierrors.IsForbidden(o.BufferError()))
	*now = now.Add(statusPause)
	_, err := o.ObserveCluster(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, updates, "no write tried after the pause")
}

// Templates are read once per templateTTL, and at most maxReadsPerSample
// new ones per sample: many buffers never burst the client the drains use.
func TestTemplateReadsAreKeptAndBoundedPerSample(t *testing.T) {
	n := maxReadsPerSample + 10
	core := []runtime.Object{newNode("n1", apiPool.NodePoolLabel())}
	var buffers []*unstructured.Unstructured
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		core = append(core, podTemplate("shop", name, apiLabels, "10m"))
		buffers = append(buffers, buffer("shop", name, map[string]any{"podTemplateRef": map[string]any{"name": name}, "replicas": int64(1)}))
	}
	o, cs, _, now := bufferCluster(t, true, core, buffers...)
	gets := func() int {
		c := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "podtemplates" {
				c++
			}
		}
		return c
	}
	sample := func() int {
		obs, err := o.ObserveCluster(context.Background())
		require.NoError(t, err)
		p := obs.Pools[apiPool.WorkflowID()]
		return len(p.Buffers) + p.Truncated // a pool takes in at most types.MaxBuffers
	}
	assert.Equal(t, maxReadsPerSample, sample(), "the first sample reads up to its bound")
	assert.Equal(t, maxReadsPerSample, gets())
	assert.Equal(t, n, sample(), "the next sample reads the rest")
	assert.Equal(t, n, gets())
	assert.Equal(t, n, sample())
	assert.Equal(t, n, gets(), "a template read within its TTL was read again")
	*now = now.Add(templateTTL)
	assert.Equal(t, n, sample(), "expired reads keep their buffers while the sample's reads run out")
	assert.Equal(t, n+maxReadsPerSample, gets())
}
