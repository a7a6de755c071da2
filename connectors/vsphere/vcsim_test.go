package vsphere

import (
	"context"
	"crypto/tls"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors"
	vtypes "github.com/hanzoai/visor-fleet/types"
)

// The vcsim login; the password has colons to prove the split is at the first.
const (
	simUser     = "visor@vsphere.local"
	simPassword = "pa:ss:word"
	credEnv     = "env:VISOR_TEST_VSPHERE_CREDENTIAL"
)

// vcsim is an in-process vCenter (govmomi's simulator) with two template
// VMs and an empty /DC0/vm/visor folder.
type vcsim struct {
	model    *simulator.Model
	endpoint string
	admin    *govmomi.Client
	finder   *find.Finder
}

func startVCSim(t *testing.T) *vcsim {
	t.Helper()
	ctx := context.Background()
	m := simulator.VPX()
	require.NoError(t, m.Create())
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(simUser, simPassword)}
	s := m.Service.NewServer()
	t.Cleanup(func() { s.Close(); m.Remove() })

	admin, err := govmomi.NewClient(ctx, s.URL, true)
	require.NoError(t, err)
	endpoint := *s.URL
	endpoint.User = nil
	v := &vcsim{model: m, endpoint: endpoint.String(), admin: admin, finder: find.NewFinder(admin.Client, false)}
	dc, err := v.finder.DefaultDatacenter(ctx)
	require.NoError(t, err)
	v.finder.SetDatacenter(dc)
	v.makeTemplate(t, "/DC0/vm/DC0_C0_RP0_VM0", 2, 4096)
	v.makeTemplate(t, "/DC0/vm/DC0_C0_RP0_VM1", 4, 8192)
	vmFolder, err := v.finder.Folder(ctx, "/DC0/vm")
	require.NoError(t, err)
	_, err = vmFolder.CreateFolder(ctx, "visor")
	require.NoError(t, err)
	return v
}

// makeTemplate turns a simulator VM into a template of the given shape.
func (v *vcsim) makeTemplate(t *testing.T, path string, cpus int32, memMiB int64) {
	ctx := context.Background()
	vm, err := v.finder.VirtualMachine(ctx, path)
	require.NoError(t, err)
	task, err := vm.PowerOff(ctx)
	require.NoError(t, err)
	require.NoError(t, task.Wait(ctx))
	task, err = vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{NumCPUs: cpus, MemoryMB: memMiB})
	require.NoError(t, err)
	require.NoError(t, task.Wait(ctx))
	require.NoError(t, vm.MarkAsTemplate(ctx))
}

func (v *vcsim) config() Config {
	return Config{
		CommonConfig: connectors.CommonConfig{Credentials: credEnv},
		Endpoint:     v.endpoint,
		Insecure:     true,
		Folder:       "/DC0/vm/visor",
		ResourcePool: "/DC0/host/DC0_C0/Resources",
		Templates: []Template{
			{Shape: Shape{Name: "small", CPUs: 2, MemoryMiB: 4096, HourlyPrice: 0.05, PriceDate: "2026-11"}, Path: "/DC0/vm/DC0_C0_RP0_VM0"},
			{Shape: Shape{Name: "large", CPUs: 4, MemoryMiB: 8192, HourlyPrice: 0.10, PriceDate: "2026-11"}, Path: "/DC0/vm/DC0_C0_RP0_VM1"},
		},
	}
}

func (v *vcsim) provider(t *testing.T, mutate ...func(*Config)) *Provider {
	t.Helper()
	t.Setenv(credEnv[len("env:"):], simUser+":"+simPassword)
	cfg := v.config()
	for _, f := range mutate {
		f(&cfg)
	}
	p, err := New(context.Background(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// addFault injects a fault into every call of method on the named object.
func (v *vcsim) addFault(method, object string, f types.BaseMethodFault, times int) {
	v.model.Service.AddFaultRule(&simulator.FaultInjectionRule{
		MethodName: method, ObjectType: "*", ObjectName: object,
		Probability: 1, FaultType: simulator.FaultTypeCustom, Fault: f,
		MaxCount: times, Enabled: true,
	})
}

// vmExists reports whether a VM of that name is in the group's folder.
func (v *vcsim) vmExists(t *testing.T, group, name string) bool {
	_, err := v.finder.VirtualMachine(context.Background(), "/DC0/vm/visor/"+group+"/"+name)
	if err == nil {
		return true
	}
	var nf *find.NotFoundError
	require.ErrorAs(t, err, &nf)
	return false
}

func testPool(service string) vtypes.PoolKey {
	return vtypes.PoolKey{Org: "acme", Project: "shop", Service: service, Provider: "vsphere", Cluster: "onprem-1"}
}

func names(g connectors.NodeGroup) map[string]string {
	out := map[string]string{}
	for _, i := range g.Instances {
		out[i.Name] = i.ID
	}
	return out
}

// serialize makes concurrent calls of f run one at a time.
func serialize(f func(context.Context, string)) func(context.Context, string) {
	var mu sync.Mutex
	return func(ctx context.Context, name string) {
		mu.Lock()
		defer mu.Unlock()
		f(ctx, name)
	}
}

func soapFault(f types.BaseMethodFault) error { return soap.WrapVimFault(f) }

func taskFault(f types.BaseMethodFault) error {
	return task.Error{LocalizedMethodFault: &types.LocalizedMethodFault{Fault: f, LocalizedMessage: "m"}}
}
