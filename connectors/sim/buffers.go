package sim

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// The simulated cluster serves the CapacityBuffer API (autoscaling.x-k8s.io
// v1beta1) through a dynamic client of its own, so `visor dev` and the
// tests can give its pools buffers. Buffers are not saved with the
// cluster's state: they live as long as the process.
const (
	bufferGroupVersion = "autoscaling.x-k8s.io/v1beta1"
	bufferResource     = "capacitybuffers"
)

func newBufferClient(cs *fake.Clientset) *dynamicfake.FakeDynamicClient {
	gvr := schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1beta1", Resource: bufferResource}
	cs.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: bufferGroupVersion,
		APIResources: []metav1.APIResource{{Name: bufferResource, Namespaced: true, Kind: "CapacityBuffer"}},
	}}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "CapacityBufferList"})
}

// Dynamic is the simulated cluster's client for CapacityBuffers, for the
// observer (kubernetes.Config.Dynamic) and for whoever creates buffers.
func (f *Fleet) Dynamic() dynamic.Interface { return f.dyn }
