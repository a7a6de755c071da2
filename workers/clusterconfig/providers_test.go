package clusterconfig_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	vimtypes "github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	hetznerapi "github.com/hanzoai/visor-fleet/connectors/hetzner/fakeapi"
	"github.com/hanzoai/visor-fleet/types"
)

// providerFile is a one-cluster file whose Kubernetes API is never
// contacted (client-go connects lazily) and whose provider section is given.
func providerFile(t *testing.T, provider, section string) string {
	kubeconfig := writeKubeconfig(t, "c", map[string]string{"c": "https://127.0.0.1:1"})
	return fmt.Sprintf("clusters:\n  - id: c1\n    provider: %s\n    kubeconfig: %s\n    %s: %s\n", provider, kubeconfig, provider, section)
}

func TestHetznerClusterBuildsAndCallsTheAPI(t *testing.T) {
	const token = "hcloud-test-token"
	api := hetznerapi.New(token)
	t.Cleanup(api.Close)
	t.Setenv("VISOR_CLUSTERCONFIG_TEST_HCLOUD", token)
	src := newSource(t, mustLoad(t, providerFile(t, "hetzner", fmt.Sprintf(
		`{credentials: "env:VISOR_CLUSTERCONFIG_TEST_HCLOUD", baseURL: %q, location: fsn1, image: ubuntu-24.04}`, api.URL1()))))

	c, err := src.Cluster(context.Background(), "c1")
	require.NoError(t, err)
	assert.Equal(t, "hetzner", c.Provider.Name())
	groups, err := c.Provider.NodeGroups(context.Background(), types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "hetzner", Cluster: "c1"})
	require.NoError(t, err, "the resolved token must reach the API")
	assert.Empty(t, groups)
}

func TestAWSClusterBuildsAndRejectsAMalformedCredential(t *testing.T) {
	t.Setenv("VISOR_CLUSTERCONFIG_TEST_AWS", "AKIDEXAMPLE:wJalrXUtnFEMIexample")
	c, err := newSource(t, mustLoad(t, providerFile(t, "aws",
		`{credentials: "env:VISOR_CLUSTERCONFIG_TEST_AWS", region: eu-west-1, mode: asg}`))).Cluster(context.Background(), "c1")
	require.NoError(t, err)
	assert.Equal(t, "aws", c.Provider.Name())
	catalog, err := c.Provider.Catalog(context.Background())
	require.NoError(t, err)
	assert.NotEmpty(t, catalog)

	t.Setenv("VISOR_CLUSTERCONFIG_TEST_AWS", "wJalrXUtnFEMIonlyonepart")
	_, err = newSource(t, mustLoad(t, providerFile(t, "aws",
		`{credentials: "env:VISOR_CLUSTERCONFIG_TEST_AWS", region: eu-west-1, mode: asg}`))).Cluster(context.Background(), "c1")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:VISOR_CLUSTERCONFIG_TEST_AWS")
	assert.NotContains(t, err.Error(), "wJalrXUtnFEMI")
}

// startVCSim runs govmomi's in-process vCenter with one VM reshaped to
// 2 CPUs / 4 GiB to serve as the "small" template.
func startVCSim(t *testing.T, user, password string) string {
	t.Helper()
	ctx := context.Background()
	m := simulator.VPX()
	require.NoError(t, m.Create())
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(user, password)}
	s := m.Service.NewServer()
	t.Cleanup(func() { s.Close(); m.Remove() })

	admin, err := govmomi.NewClient(ctx, s.URL, true)
	require.NoError(t, err)
	finder := find.NewFinder(admin.Client, false)
	dc, err := finder.DefaultDatacenter(ctx)
	require.NoError(t, err)
	finder.SetDatacenter(dc)
	vm, err := finder.VirtualMachine(ctx, "/DC0/vm/DC0_C0_RP0_VM0")
	require.NoError(t, err)
	task, err := vm.PowerOff(ctx)
	require.NoError(t, err)
	require.NoError(t, task.Wait(ctx))
	task, err = vm.Reconfigure(ctx, vimtypes.VirtualMachineConfigSpec{NumCPUs: 2, MemoryMB: 4096})
	require.NoError(t, err)
	require.NoError(t, task.Wait(ctx))
	endpoint := *s.URL
	endpoint.User = nil
	return endpoint.String()
}

func TestVSphereClusterLogsInAndIsReleasedOnClose(t *testing.T) {
	const user, password = "visor@vsphere.local", "pa:ss:word"
	endpoint := startVCSim(t, user, password)
	section := fmt.Sprintf(`{credentials: "env:VISOR_CLUSTERCONFIG_TEST_VC", endpoint: %q, insecure: true, folder: /DC0/vm, resourcePool: /DC0/host/DC0_C0/Resources,
      templates: [{name: small, path: /DC0/vm/DC0_C0_RP0_VM0, cpus: 2, memoryMiB: 4096, hourlyPrice: 0.05}]}`, endpoint)
	file := mustLoad(t, providerFile(t, "vsphere", section))

	t.Setenv("VISOR_CLUSTERCONFIG_TEST_VC", user+":"+password)
	src := newSource(t, file)
	c, err := src.Cluster(context.Background(), "c1")
	require.NoError(t, err)
	catalog, err := c.Provider.Catalog(context.Background())
	require.NoError(t, err)
	require.Len(t, catalog, 1)
	assert.Equal(t, "small", catalog[0].Name)
	require.NoError(t, src.Close(context.Background()), "Close logs out of vCenter without error")

	t.Setenv("VISOR_CLUSTERCONFIG_TEST_VC", user+":wrong-password")
	_, err = newSource(t, file).Cluster(context.Background(), "c1")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:VISOR_CLUSTERCONFIG_TEST_VC")
	assert.NotContains(t, err.Error(), "wrong-password")
}
