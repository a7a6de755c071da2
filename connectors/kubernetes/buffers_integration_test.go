package kubernetes_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
	"github.com/hanzoai/visor-fleet/types"
)

// bufferTenant labels a buffer's pods for pool acme/shop/api.
var bufferTenant = map[string]string{types.LabelOrg: "acme", types.LabelProject: "shop", types.LabelService: "api"}

// bufferFixture installs the CapacityBuffer CRD and creates, as the admin,
// four buffers named after suffix: one of a PodTemplate and one of each
// workload kind the observer reads. It returns their names.
func (e *env) bufferFixture(suffix string) []string {
	e.t.Helper()
	if err := kubeapi.InstallCapacityBufferCRD(e.ctx, e.cluster.AdminConfig); err != nil {
		e.t.Fatal(err)
	}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web-" + suffix}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "visor.invalid/app:test",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
	}
	for k, v := range bufferTenant {
		tmpl.Labels[k] = v
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web-" + suffix}}
	two := int32(2)
	name := "web-" + suffix
	must := func(_ any, err error) {
		e.t.Helper()
		if err != nil {
			e.t.Fatal(err)
		}
	}
	must(e.admin.CoreV1().PodTemplates(e.ns).Create(e.ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Template: tmpl}, metav1.CreateOptions{}))
	must(e.admin.AppsV1().Deployments(e.ns).Create(e.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: sel, Template: tmpl}}, metav1.CreateOptions{}))
	must(e.admin.AppsV1().StatefulSets(e.ns).Create(e.ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: &two, Selector: sel, Template: tmpl}}, metav1.CreateOptions{}))
	must(e.admin.AppsV1().ReplicaSets(e.ns).Create(e.ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: &two, Selector: sel, Template: tmpl}}, metav1.CreateOptions{}))
	dyn := e.adminDynamic()
	names := []string{"tmpl-" + suffix}
	must(dyn.Resource(kubeapi.CapacityBuffers).Namespace(e.ns).Create(e.ctx, kubeapi.CapacityBuffer(e.ns, names[0], name, 3), metav1.CreateOptions{}))
	for _, kind := range []string{"Deployment", "StatefulSet", "ReplicaSet"} {
		b := kubeapi.CapacityBuffer(e.ns, strings.ToLower(kind)+"-"+suffix, "", 1)
		b.Object["spec"] = map[string]any{"scalableRef": map[string]any{"apiGroup": "apps", "kind": kind, "name": name}, "replicas": int64(1)}
		must(dyn.Resource(kubeapi.CapacityBuffers).Namespace(e.ns).Create(e.ctx, b, metav1.CreateOptions{}))
		names = append(names, b.GetName())
	}
	return names
}

func (e *env) adminDynamic() dynamic.Interface {
	e.t.Helper()
	d, err := dynamic.NewForConfig(e.cluster.AdminConfig)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// readyFor is the ReadyForProvisioning condition on a buffer, as the admin
// reads it.
func (e *env) readyFor(name string) (status, message string) {
	e.t.Helper()
	u, err := e.adminDynamic().Resource(kubeapi.CapacityBuffers).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == kubernetes.ConditionReadyForProvisioning {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["message"])
		}
	}
	return "", ""
}

// observeBuffers is the buffer part of the connector's cycle: one sample
// with the dynamic client must turn every fixture buffer into the pool's
// headroom and write its status, with no read or write refused.
func observeBuffers(e *env, cfg *rest.Config, client k8s.Interface, buffers []string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	obs := kubernetes.NewObserver(client, kubernetes.Config{Cluster: "it", Provider: "do", Dynamic: dyn})
	co, err := obs.ObserveCluster(e.ctx)
	if err != nil {
		return err
	}
	if err := obs.BufferError(); err != nil {
		return err
	}
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "do", Cluster: "it"}
	got := map[string]types.BufferObservation{}
	for _, b := range co.Pools[pool.WorkflowID()].Buffers {
		if b.Namespace == e.ns {
			got[b.Name] = b
		}
	}
	var problems []error
	for _, name := range buffers {
		b, ok := got[name]
		if !ok || b.Pods == 0 || b.Error != "" {
			problems = append(problems, fmt.Errorf("buffer %s not the pool's headroom: %+v", name, b))
		}
		if st, msg := e.readyFor(name); st != "True" {
			problems = append(problems, fmt.Errorf("buffer %s: ReadyForProvisioning %q (%s)", name, st, msg))
		}
	}
	return errors.Join(problems...)
}

// The shipped role lets the connector read buffers and write their status,
// and not one verb more on them: it cannot change a buffer's spec, read
// one by name, patch its status, nor list the templates and workloads it
// only gets.
func TestIntegrationBufferRightsStopAtWhatTheObserverUses(t *testing.T) {
	e := newEnv(t)
	names := e.bufferFixture("more")
	dyn, err := dynamic.NewForConfig(e.cluster.ConnectorConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := observeBuffers(e, e.cluster.ConnectorConfig, e.connector, names); err != nil {
		t.Fatalf("with the shipped role the buffers are not read: %v", err)
	}
	buffers := dyn.Resource(kubeapi.CapacityBuffers).Namespace(e.ns)
	u, err := e.adminDynamic().Resource(kubeapi.CapacityBuffers).Namespace(e.ns).Get(e.ctx, names[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, call := range map[string]func() error{
		"update a buffer's spec": func() error { _, err := buffers.Update(e.ctx, u, metav1.UpdateOptions{}); return err },
		"get a buffer":           func() error { _, err := buffers.Get(e.ctx, names[0], metav1.GetOptions{}); return err },
		"watch buffers":          func() error { _, err := buffers.Watch(e.ctx, metav1.ListOptions{}); return err },
		"create a buffer": func() error {
			_, err := buffers.Create(e.ctx, kubeapi.CapacityBuffer(e.ns, "mine", "web-more", 1), metav1.CreateOptions{})
			return err
		},
		"delete a buffer": func() error { return buffers.Delete(e.ctx, names[0], metav1.DeleteOptions{}) },
		"patch a buffer's status": func() error {
			_, err := buffers.Patch(e.ctx, names[0], k8stypes.MergePatchType, []byte(`{"status":{"replicas":9}}`), metav1.PatchOptions{}, "status")
			return err
		},
		"list podtemplates": func() error {
			_, err := e.connector.CoreV1().PodTemplates(e.ns).List(e.ctx, metav1.ListOptions{})
			return err
		},
		"list deployments": func() error {
			_, err := e.connector.AppsV1().Deployments(e.ns).List(e.ctx, metav1.ListOptions{})
			return err
		},
		"update a deployment": func() error {
			d, err := e.admin.AppsV1().Deployments(e.ns).Get(e.ctx, "web-more", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.connector.AppsV1().Deployments(e.ns).Update(e.ctx, d, metav1.UpdateOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
}
