package kubeapi

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// capacityBufferCRD is a stand-in for the CapacityBuffer CRD
// cluster-autoscaler ships (testdata/capacitybuffer-crd.yaml).
//
//go:embed testdata/capacitybuffer-crd.yaml
var capacityBufferCRD []byte

// CapacityBuffers is where the tests create CapacityBuffers.
var CapacityBuffers = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1beta1", Resource: "capacitybuffers"}

// InstallCapacityBufferCRD installs the CapacityBuffer CRD (once: an
// existing one is kept) and waits until discovery serves it.
func InstallCapacityBufferCRD(ctx context.Context, admin *rest.Config) error {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(capacityBufferCRD, &crd.Object); err != nil {
		return fmt.Errorf("capacitybuffer CRD: %w", err)
	}
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return err
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the capacitybuffer CRD: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(admin)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		list, err := disco.ServerResourcesForGroupVersion(CapacityBuffers.GroupVersion().String())
		if err == nil {
			for _, r := range list.APIResources {
				if r.Name == CapacityBuffers.Resource {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("capacitybuffers not served 30s after the CRD was created: %v", err)
		}
	}
}

// CapacityBuffer is a buffer of replicas pods of the named PodTemplate.
func CapacityBuffer(namespace, name, podTemplate string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": CapacityBuffers.GroupVersion().String(), "kind": "CapacityBuffer",
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec":     map[string]any{"podTemplateRef": map[string]any{"name": podTemplate}, "replicas": replicas},
	}}
}
