package helm

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

// serviceMonitorCRD stands in for prometheus-operator's: enough schema for
// the API server to serve the kind, so the ServiceMonitor is dry-run too.
const serviceMonitorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// The real kube-apiserver accepts every rendered object, with strict
// field validation, in a server-side dry run.
func TestRealAPIServerAcceptsEveryManifestInADryRun(t *testing.T) {
	ctx, api := startAPIServer(t)
	core, dyn := api.core, api.dyn
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	accepted := 0
	for _, f := range files {
		for _, m := range mustRender(t, filepath.Base(f), nil) {
			u := toUnstructured(t, m)
			_, err := api.resource(t, m, u).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
			require.NoError(t, err, "%s: %s %s refused:\n%s", f, m.GVK.Kind, u.GetName(), m.YAML)
			accepted++
		}
	}
	t.Logf("%d manifests from %d values files accepted by kube-apiserver (dry run)", accepted, len(files))

	// And the server does check: a label Kubernetes does not allow decodes
	// fine on the client but is refused here.
	refused := false
	for _, m := range mustRender(t, "minimal.yaml", map[string]any{"worker": map[string]any{"podLabels": map[string]any{"team/visor/ops": "x"}}}) {
		if m.GVK.Kind != "Deployment" {
			continue
		}
		u := toUnstructured(t, m)
		_, err := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(releaseNamespace).
			Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		require.ErrorContains(t, err, "team/visor/ops")
		refused = true
	}
	require.True(t, refused)
	// Nothing was created: dry run means dry run.
	deps, err := core.AppsV1().Deployments(releaseNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, deps.Items)
}

// apiServer is a real kube-apiserver with the release's namespace and
// the ServiceMonitor CRD, and the clients the tests use on it.
type apiServer struct {
	core   kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func startAPIServer(t *testing.T) (context.Context, apiServer) {
	t.Helper()
	c := kubeapi.ForTest(t, kubeapi.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	api := apiServer{core: kubernetes.NewForConfigOrDie(c.AdminConfig), dyn: dynamic.NewForConfigOrDie(c.AdminConfig)}
	_, err := api.core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
	installServiceMonitorCRD(ctx, t, api.dyn)
	api.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(c.AdminConfig)))
	return ctx, api
}

// resource is where m's kind is served, in its namespace when namespaced.
func (a apiServer) resource(t *testing.T, m manifest, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	mapping, err := a.mapper.RESTMapping(m.GVK.GroupKind(), m.GVK.Version)
	require.NoError(t, err, "%s is not served", m.GVK)
	if mapping.Scope.Name() == "namespace" {
		return a.dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
	}
	return a.dyn.Resource(mapping.Resource)
}

func installServiceMonitorCRD(ctx context.Context, t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(serviceMonitorCRD), &crd.Object))
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := crds.Get(ctx, crd.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not established in 30s: %v", crd.GetName(), conds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func toUnstructured(t *testing.T, m manifest) *unstructured.Unstructured {
	t.Helper()
	if u, ok := m.Object.(*unstructured.Unstructured); ok {
		return u
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m.Object)
	require.NoError(t, err, m.Template)
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(m.GVK.GroupVersion().String())
	u.SetKind(m.GVK.Kind)
	if u.GetName() == "" {
		t.Fatalf("%s: a %s without a name", m.Template, m.GVK.Kind)
	}
	return u
}
