package helm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/visor-fleet/workers/clusterconfig"
)

// Every values file renders, every manifest decodes strictly with the
// Kubernetes types, and every clusters file the chart writes is one the
// worker accepts.
func TestEveryValuesFileRendersObjectsKubernetesAndTheWorkerAccept(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ms := mustRender(t, filepath.Base(f), nil)
			require.NotEmpty(t, ms)
			for _, cm := range byKind[*corev1.ConfigMap](t, ms, "ConfigMap") {
				if _, ok := cm.Data["clusters.yaml"]; !ok {
					continue // the Grafana dashboard's
				}
				path := filepath.Join(t.TempDir(), "clusters.yaml")
				require.NoError(t, os.WriteFile(path, []byte(cm.Data["clusters.yaml"]), 0o600))
				_, err := clusterconfig.Load(path)
				require.NoError(t, err, "configmap %s: the worker refuses its clusters file:\n%s", cm.Name, cm.Data["clusters.yaml"])
			}
		})
	}
}

func TestMinimalInstallIsOneWorkerWithTheConnectorsRBAC(t *testing.T) {
	ms := mustRender(t, "minimal.yaml", nil)
	deps := byKind[*appsv1.Deployment](t, ms, "Deployment")
	require.Len(t, deps, 1)
	d := deps["visor-visor-fleet"]
	require.NotNil(t, d)
	assert.EqualValues(t, 2, *d.Spec.Replicas)
	assert.Equal(t, releaseNamespace, d.Namespace)
	c := container(t, d)
	assert.Equal(t, "hanzoai/visor-fleet:0.1.0", c.Image, "tag defaults to the appVersion")
	assert.Equal(t, []string{"visor"}, c.Command)
	assert.Equal(t, []string{"worker", "--task-queue=visor-fleet", "--metrics-addr=0.0.0.0:9464"}, c.Args, "no clusters: no clusters file")
	assert.Empty(t, byKind[*corev1.ConfigMap](t, ms, "ConfigMap"))
	env := envOf(c)
	assert.Equal(t, "temporal-frontend.temporal.svc:7233", env["TEMPORAL_ADDRESS"].Value)
	assert.Equal(t, "default", env["TEMPORAL_NAMESPACE"].Value)
	for _, name := range []string{"TEMPORAL_TLS_CERT", "TEMPORAL_API_KEY"} {
		assert.NotContains(t, env, name)
	}
	require.Len(t, c.Ports, 1)
	assert.Equal(t, corev1.ContainerPort{Name: "metrics", ContainerPort: 9464, Protocol: corev1.ProtocolTCP}, c.Ports[0])
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		require.NotNil(t, p)
		require.NotNil(t, p.HTTPGet)
		assert.Equal(t, "/metrics", p.HTTPGet.Path)
		assert.Equal(t, "metrics", p.HTTPGet.Port.String())
	}
	assert.Equal(t, "250m", c.Resources.Requests.Cpu().String())
	require.NotNil(t, c.SecurityContext.ReadOnlyRootFilesystem)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.Equal(t, "visor-visor-fleet", d.Spec.Template.Spec.ServiceAccountName)
	assert.Contains(t, d.Spec.Template.Annotations, "checksum/clusters")
	assert.NotContains(t, mountsOf(c), "clusters")

	assert.Len(t, byKind[*corev1.ServiceAccount](t, ms, "ServiceAccount"), 1)
	svc := byKind[*corev1.Service](t, ms, "Service")["visor-visor-fleet-metrics"]
	require.NotNil(t, svc)
	for k, v := range svc.Spec.Selector {
		assert.Equal(t, v, d.Spec.Template.Labels[k], "the metrics Service selects the worker pods (%s)", k)
	}
	assert.Empty(t, kinds(ms, "ServiceMonitor"), "ServiceMonitor is opt-in")

	binding := byKind[*rbacv1.ClusterRoleBinding](t, ms, "ClusterRoleBinding")["visor-visor-fleet-connector"]
	require.NotNil(t, binding)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "visor-visor-fleet", Namespace: releaseNamespace}}, binding.Subjects)
	assert.Equal(t, "visor-visor-fleet-connector", binding.RoleRef.Name)
}

// The chart's ClusterRole is the shipped one, rule for rule: the chart is
// not a second, drifting copy of what the connector needs.
func TestChartClusterRoleEqualsTheShippedOne(t *testing.T) {
	shipped := shippedClusterRole(t)
	for _, values := range []string{"minimal.yaml", "production.yaml", "tenant-only.yaml"} {
		roles := byKind[*rbacv1.ClusterRole](t, mustRender(t, values, nil), "ClusterRole")
		require.Len(t, roles, 1, values)
		for _, r := range roles {
			assert.Equal(t, shipped.Rules, r.Rules, "%s: chart ClusterRole rules differ from deploy/rbac/clusterrole.yaml", values)
		}
	}
	// And the comparison can fail: one verb less is noticed.
	fewer := shipped.DeepCopy()
	fewer.Rules[0].Verbs = fewer.Rules[0].Verbs[:1]
	for _, r := range byKind[*rbacv1.ClusterRole](t, mustRender(t, "minimal.yaml", nil), "ClusterRole") {
		assert.NotEqual(t, fewer.Rules, r.Rules)
	}
}

func TestProductionValuesMountTLSAndTakeCredentialsFromSecrets(t *testing.T) {
	ms := mustRender(t, "production.yaml", nil)
	deps := byKind[*appsv1.Deployment](t, ms, "Deployment")
	require.Len(t, deps, 3, "platform worker and two tenant workers")
	d := deps["visor-visor-fleet"]
	require.NotNil(t, d)
	assert.EqualValues(t, 3, *d.Spec.Replicas)
	c := container(t, d)
	assert.Equal(t, "registry.internal/visor-fleet:1.2.3", c.Image)
	for _, arg := range []string{
		"--task-queue=visor-fleet", "--register-search-attributes", "--max-concurrent-activities=50", "--sticky-cache-size=15000",
		"--system-key=file:/etc/visor/auth/system-key/system-key.json", "--trust=file:/etc/visor/auth/trust/trust.json",
		"--meter-endpoint=https://billing.example.internal/v1/node-hours", "--meter-token=env:VISOR_METER_TOKEN",
	} {
		assert.Contains(t, c.Args, arg)
	}
	assert.NotContains(t, c.Args, "--tls", "mTLS material implies TLS; the flag is for system roots only")

	env := envOf(c)
	assert.Equal(t, "/etc/visor/temporal-tls/tls.crt", env["TEMPORAL_TLS_CERT"].Value)
	assert.Equal(t, "/etc/visor/temporal-tls/tls.key", env["TEMPORAL_TLS_KEY"].Value)
	assert.Equal(t, "/etc/visor/temporal-tls/ca.crt", env["TEMPORAL_TLS_CA"].Value)
	mounts, secrets := mountsOf(c), secretVolumes(d)
	assert.Equal(t, "/etc/visor/temporal-tls", mounts["temporal-tls"])
	assert.Equal(t, "temporal-client-tls", secrets["temporal-tls"])
	assert.Equal(t, "/etc/visor/kubeconfigs", mounts["secret-files-0"])
	assert.Equal(t, "visor-kubeconfigs", secrets["secret-files-0"])
	assert.Equal(t, "hcloud", secrets["secret-files-1"])

	// Credentials are Secret references, never values.
	for name, secret := range map[string][2]string{
		"DIGITALOCEAN_TOKEN": {"do-api", "token"}, "VISOR_TOKEN_DO_AMS3": {"visor-enrollment", "do-ams3"},
		"VISOR_METER_TOKEN": {"billing-token", "token"},
	} {
		e := env[name]
		require.NotNil(t, e.ValueFrom, name)
		require.NotNil(t, e.ValueFrom.SecretKeyRef, name)
		assert.Equal(t, secret[0], e.ValueFrom.SecretKeyRef.Name, name)
		assert.Equal(t, secret[1], e.ValueFrom.SecretKeyRef.Key, name)
		assert.Empty(t, e.Value, name)
	}
	assert.NotContains(t, env, "AWS_ACME", "a tenant's credential never reaches the platform worker")

	sm := byKind[*unstructured.Unstructured](t, ms, "ServiceMonitor")["visor-visor-fleet"]
	require.NotNil(t, sm, "serviceMonitor.enabled renders one")
	assert.Equal(t, "monitoring.coreos.com/v1", sm.GetAPIVersion())
	assert.Equal(t, "prometheus", sm.GetLabels()["release"])
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	require.Len(t, endpoints, 1)
	assert.Equal(t, "metrics", endpoints[0].(map[string]any)["port"])
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	svc := byKind[*corev1.Service](t, ms, "Service")["visor-visor-fleet-metrics"]
	for k, v := range selector {
		assert.Equal(t, v, svc.Labels[k], "the ServiceMonitor selects the metrics Service (%s)", k)
	}
}

// A tenant worker polls the tenant's queue with only the tenant's clusters
// and credentials, under its own service account.
func TestTenantWorkersHoldOnlyTheirTenantsClustersAndCredentials(t *testing.T) {
	ms := mustRender(t, "production.yaml", nil)
	deps := byKind[*appsv1.Deployment](t, ms, "Deployment")
	cms := byKind[*corev1.ConfigMap](t, ms, "ConfigMap")
	acme := deps["visor-visor-fleet-acme"]
	require.NotNil(t, acme)
	c := container(t, acme)
	assert.Contains(t, c.Args, "--task-queue=tenant-acme")
	assert.NotContains(t, c.Args, "--register-search-attributes", "only the platform worker registers search attributes")
	assert.EqualValues(t, 1, *acme.Spec.Replicas)
	env := envOf(c)
	assert.Equal(t, "acme-aws", env["AWS_ACME"].ValueFrom.SecretKeyRef.Name)
	assert.NotContains(t, env, "DIGITALOCEAN_TOKEN")
	assert.Equal(t, "500m", c.Resources.Requests.Cpu().String(), "sizing is inherited from worker")
	assert.Equal(t, "visor-visor-fleet-acme", acme.Spec.Template.Spec.ServiceAccountName)
	assert.Equal(t, "acme-kubeconfig", secretVolumes(acme)["secret-files-0"])
	assert.NotContains(t, secretVolumes(acme), "secret-files-1")

	acmeClusters := cms["visor-visor-fleet-acme-clusters"].Data["clusters.yaml"]
	assert.Contains(t, acmeClusters, "acme-eks")
	assert.NotContains(t, acmeClusters, "do-ams3")
	assert.NotContains(t, cms["visor-visor-fleet-clusters"].Data["clusters.yaml"], "acme-eks")

	globex := deps["visor-visor-fleet-globex"]
	require.NotNil(t, globex)
	assert.EqualValues(t, 2, *globex.Spec.Replicas)
	globexRequests := container(t, globex).Resources.Requests
	assert.Equal(t, "100m", globexRequests.Cpu().String())
	assert.NotContains(t, cms, "visor-visor-fleet-globex-clusters", "no clusters, no clusters file")
	assert.NotContains(t, container(t, globex).Args, "--clusters=/etc/visor/clusters/clusters.yaml")
	assert.Contains(t, container(t, acme).Args, "--clusters=/etc/visor/clusters/clusters.yaml")

	// Each worker's pods are told apart, so one Deployment never adopts another's.
	selectors := map[string]bool{}
	for _, d := range deps {
		selectors[d.Spec.Selector.MatchLabels["app.kubernetes.io/component"]] = true
	}
	assert.Len(t, selectors, 3)

	binding := byKind[*rbacv1.ClusterRoleBinding](t, ms, "ClusterRoleBinding")["visor-visor-fleet-connector"]
	var names []string
	for _, s := range binding.Subjects {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	assert.Equal(t, []string{"visor-visor-fleet", "visor-visor-fleet-acme", "visor-visor-fleet-globex"}, names)
	assert.Len(t, byKind[*corev1.ServiceAccount](t, ms, "ServiceAccount"), 3)
}

func TestTenantOnlyInstallOnTemporalCloud(t *testing.T) {
	ms := mustRender(t, "tenant-only.yaml", nil)
	deps := byKind[*appsv1.Deployment](t, ms, "Deployment")
	require.Len(t, deps, 1)
	d := deps["visor-visor-fleet-initech"]
	require.NotNil(t, d)
	c := container(t, d)
	assert.Contains(t, c.Args, "--tls")
	assert.Contains(t, c.Args, "--task-queue=tenant-initech")
	env := envOf(c)
	assert.Equal(t, "temporal-cloud", env["TEMPORAL_API_KEY"].ValueFrom.SecretKeyRef.Name)
	assert.Equal(t, "visor.a1b2c", env["TEMPORAL_NAMESPACE"].Value)
	sas := byKind[*corev1.ServiceAccount](t, ms, "ServiceAccount")
	assert.Len(t, sas, 1)
	assert.Contains(t, sas, "visor-visor-fleet-initech")
}

// Bad values are refused with a message naming the field; nothing renders.
func TestBadValuesAreRefusedNamingTheField(t *testing.T) {
	for name, tc := range map[string]struct {
		values    string
		overrides map[string]any
		want      []string
	}{
		"no Temporal address":       {"", nil, []string{"temporal.address is required"}},
		"misspelt top-level key":    {"minimal.yaml", map[string]any{"serviceMonitr": map[string]any{"enabled": true}}, []string{"serviceMonitr"}},
		"credential without a key":  {"minimal.yaml", map[string]any{"worker": map[string]any{"credentials": []any{map[string]any{"env": "X", "secretName": "s"}}}}, []string{"credentials", "key"}},
		"negative replicas":         {"minimal.yaml", map[string]any{"worker": map[string]any{"replicas": -1}}, []string{"replicas"}},
		"tenant name not a label":   {"minimal.yaml", map[string]any{"tenantWorkers": []any{map[string]any{"name": "Acme Corp", "taskQueue": "tenant-acme"}}}, []string{`tenantWorkers[0].name "Acme Corp"`}},
		"tenant on platform queue":  {"minimal.yaml", map[string]any{"tenantWorkers": []any{map[string]any{"name": "acme", "taskQueue": "visor-fleet"}}}, []string{"tenantWorkers[0].taskQueue", "platform worker's queue"}},
		"tenant twice":              {"minimal.yaml", map[string]any{"tenantWorkers": []any{map[string]any{"name": "acme", "taskQueue": "a"}, map[string]any{"name": "acme", "taskQueue": "b"}}}, []string{`tenantWorkers[1].name "acme" is used twice`}},
		"cluster with bad provider": {"minimal.yaml", map[string]any{"worker": map[string]any{"clusters": []any{map[string]any{"id": "c1", "provider": "openstack"}}}}, []string{"provider"}},
		"UI without its login":      {"ui-oidc.yaml", map[string]any{"ui": map[string]any{"oidc": map[string]any{"clientId": ""}}}, []string{"ui.enabled needs its OIDC login"}},
		"UI without codec server":   {"ui-oidc.yaml", map[string]any{"codecServer": map[string]any{"enabled": false}}, []string{"ui.enabled needs codecServer.enabled"}},
		"codec checking no caller":  {"ui-oidc.yaml", map[string]any{"auth": map[string]any{"trust": map[string]any{"secretName": ""}}, "codecServer": map[string]any{"oidc": map[string]any{"jwksUrl": ""}}}, []string{"codecServer.enabled needs a check of its callers"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render(t, tc.values, tc.overrides)
			require.Error(t, err)
			t.Log(err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func kinds(ms []manifest, kind string) []string {
	var out []string
	for _, m := range ms {
		if strings.EqualFold(m.GVK.Kind, kind) {
			out = append(out, m.Template)
		}
	}
	return out
}

// The platform's org limits reach the platform worker's clusters file, and
// no tenant's own worker carries them.
func TestOrgLimitsGoToThePlatformWorkerOnly(t *testing.T) {
	ms := mustRender(t, "production.yaml", nil)
	var platform, tenants int
	for _, cm := range byKind[*corev1.ConfigMap](t, ms, "ConfigMap") {
		if _, ok := cm.Data["clusters.yaml"]; !ok {
			continue // the Grafana dashboard's
		}
		path := filepath.Join(t.TempDir(), "clusters.yaml")
		require.NoError(t, os.WriteFile(path, []byte(cm.Data["clusters.yaml"]), 0o600))
		f, err := clusterconfig.Load(path)
		require.NoError(t, err)
		if cm.Labels["app.kubernetes.io/component"] == "worker" {
			platform++
			assert.Equal(t, 40, f.OrgLimits()["acme"].MaxNodes, "configmap %s", cm.Name)
			assert.Equal(t, 10, f.OrgLimits()["globex"].MaxNodes)
			continue
		}
		tenants++
		assert.Empty(t, f.Orgs, "tenant worker configmap %s carries the platform's org limits", cm.Name)
	}
	require.Equal(t, 1, platform, "the platform worker's clusters file")
	require.Positive(t, tenants)
}

// The deployed Web UI sits behind its OIDC login and forwards the user's
// access token to the codec server, which checks it against the IdP's
// keys (and Visor tokens with the trust file) before it decodes.
func TestWebUIIsBehindOIDCAndTheCodecServerChecksTheCaller(t *testing.T) {
	deps := byKind[*appsv1.Deployment](t, mustRender(t, "ui-oidc.yaml", nil), "Deployment")
	ui, codec := deps["visor-visor-fleet-ui"], deps["visor-visor-fleet-codec"]
	require.NotNil(t, ui)
	require.NotNil(t, codec)
	env := envOf(container(t, ui))
	assert.Equal(t, "true", env["TEMPORAL_AUTH_ENABLED"].Value)
	assert.Equal(t, "https://idp.example.internal", env["TEMPORAL_AUTH_PROVIDER_URL"].Value)
	assert.Equal(t, "https://temporal-ui.example.internal/auth/sso/callback", env["TEMPORAL_AUTH_CALLBACK_URL"].Value)
	assert.Equal(t, "temporal-ui-oidc", env["TEMPORAL_AUTH_CLIENT_SECRET"].ValueFrom.SecretKeyRef.Name, "the client secret comes from a Secret")
	assert.Equal(t, "https://codec.example.internal", env["TEMPORAL_CODEC_ENDPOINT"].Value)
	assert.Equal(t, "true", env["TEMPORAL_CODEC_PASS_ACCESS_TOKEN"].Value, "the UI forwards the user's token to the codec server")
	args := container(t, codec).Args
	for _, want := range []string{"codec-server", "--oidc-jwks=https://idp.example.internal/.well-known/jwks.json", "--oidc-audience=temporal-ui",
		"--trust=file:/etc/visor/trust/trust.json", "--ui-origin=https://temporal-ui.example.internal", "--keys=file:/etc/visor/codec/codec-keys.json"} {
		assert.Contains(t, args, want)
	}
	assert.NotContains(t, byKind[*appsv1.Deployment](t, mustRender(t, "minimal.yaml", nil), "Deployment"), "visor-visor-fleet-ui", "no UI unless asked for")
}

// The dashboard ConfigMap carries Grafana's sidecar label and the shipped
// dashboard JSON, byte for byte; it is off unless asked for.
func TestGrafanaDashboardIsAConfigMapForTheSidecar(t *testing.T) {
	off := mustRender(t, "minimal.yaml", nil)
	assert.Empty(t, byKind[*corev1.ConfigMap](t, off, "ConfigMap"))
	ms := mustRender(t, "minimal.yaml", map[string]any{"grafanaDashboard": map[string]any{"enabled": true, "namespace": "monitoring", "folder": "Platform"}})
	cms := byKind[*corev1.ConfigMap](t, ms, "ConfigMap")
	cm := cms["visor-visor-fleet-dashboard"]
	require.NotNil(t, cm, "configmaps %v", cms)
	assert.Equal(t, "monitoring", cm.Namespace)
	assert.Equal(t, "1", cm.Labels["grafana_dashboard"])
	assert.Equal(t, "Platform", cm.Annotations["grafana_folder"])
	shipped, err := os.ReadFile("../grafana/visor-fleet.json")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimRight(string(shipped), "\n"), cm.Data["visor-fleet.json"])
	_, err = render(t, "minimal.yaml", map[string]any{"grafanaDashboard": map[string]any{"enabled": true, "sidecarLabel": ""}})
	require.ErrorContains(t, err, "sidecarLabel")
}
