package helm

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const (
	chartDir         = "visor-fleet"
	releaseName      = "visor"
	releaseNamespace = "visor-system"
)

// manifest is one rendered object: the template it came from, its YAML,
// and the object decoded strictly with the Kubernetes types (unstructured
// for kinds client-go does not know, such as ServiceMonitor).
type manifest struct {
	Template string
	YAML     string
	GVK      schema.GroupVersionKind
	Object   runtime.Object
}

// render renders the chart with a values file (and overrides on top) the
// way `helm template` does: the values schema is checked first.
func render(t *testing.T, valuesFile string, overrides map[string]any) ([]manifest, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	vals := map[string]any{}
	if valuesFile != "" {
		if vals, err = chartutil.ReadValuesFile(filepath.Join("testdata", valuesFile)); err != nil {
			t.Fatalf("values %s: %v", valuesFile, err)
		}
	}
	vals = chartutil.CoalesceTables(overrides, vals)
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{
		Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chrt, rv)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []manifest
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		docs := releaseutil.SplitManifests(files[name])
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			doc := docs[k]
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			m := manifest{Template: name, YAML: doc}
			obj, gvk, err := decoder.Decode([]byte(doc), nil, nil)
			switch {
			case err == nil:
				m.Object, m.GVK = obj, *gvk
			case runtime.IsNotRegisteredError(err):
				u := &unstructured.Unstructured{}
				if err := yaml.UnmarshalStrict([]byte(doc), &u.Object); err != nil {
					t.Fatalf("%s: not YAML: %v\n%s", name, err, doc)
				}
				m.Object, m.GVK = u, u.GroupVersionKind()
			default:
				t.Fatalf("%s: does not decode as a Kubernetes object: %v\n%s", name, err, doc)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func mustRender(t *testing.T, valuesFile string, overrides map[string]any) []manifest {
	t.Helper()
	ms, err := render(t, valuesFile, overrides)
	if err != nil {
		t.Fatalf("render with %s: %v", valuesFile, err)
	}
	return ms
}

// byKind returns the rendered objects of one kind, keyed by name.
func byKind[T runtime.Object](t *testing.T, ms []manifest, kind string) map[string]T {
	t.Helper()
	out := map[string]T{}
	for _, m := range ms {
		if m.GVK.Kind != kind {
			continue
		}
		obj, ok := m.Object.(T)
		if !ok {
			t.Fatalf("%s %s decoded as %T", kind, m.Template, m.Object)
		}
		name := m.Object.(interface{ GetName() string }).GetName()
		if _, dup := out[name]; dup {
			t.Fatalf("two %s objects named %s", kind, name)
		}
		out[name] = obj
	}
	return out
}

// shippedClusterRole is deploy/rbac/clusterrole.yaml, what the chart's
// ClusterRole must equal rule for rule.
func shippedClusterRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "rbac", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatalf("deploy/rbac/clusterrole.yaml: %v", err)
	}
	return role
}

func container(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment %s has %d containers, want 1", d.Name, len(d.Spec.Template.Spec.Containers))
	}
	return d.Spec.Template.Spec.Containers[0]
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

func mountsOf(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		out[m.Name] = m.MountPath
	}
	return out
}

func secretVolumes(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			out[v.Name] = v.Secret.SecretName
		}
	}
	return out
}
