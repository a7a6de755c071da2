package proxmox_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/proxmox"
	"github.com/hanzoai/visor-fleet/connectors/proxmox/fakeapi"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	token    = "visor@pve!fleet=5e2a9c41-7d1f-4c0e-9a57-0b8c3e6f1d22"
	tokenEnv = "VISOR_TEST_PVE_TOKEN"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "proxmox", Cluster: "rack1"}

var groupID = proxmox.GroupID(pool.NodePoolLabel(), "small")

// newFake is a two-node cluster with a 2-CPU / 4 GiB template (9000)
// on pve1 and an 8-CPU one (9001) on pve2.
func newFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(token, "pve1", "pve2")
	t.Cleanup(srv.Close)
	srv.AddVM(fakeapi.VM{VMID: 9000, Name: "tpl-small", Node: "pve1", Template: true, CPUs: 2, MemMiB: 4096})
	srv.AddVM(fakeapi.VM{VMID: 9001, Name: "tpl-large", Node: "pve2", Template: true, CPUs: 8, MemMiB: 32768})
	return srv
}

func config(srv *fakeapi.Server) proxmox.Config {
	return proxmox.Config{
		CommonConfig: connectors.CommonConfig{Credentials: "env:" + tokenEnv},
		Endpoint:     srv.URL2(),
		TaskPoll:     types.Duration(5 * time.Millisecond),
		Templates: []proxmox.Template{
			{Shape: sizing.Shape{Name: "small", CPUs: 2, MemoryMiB: 4096, HourlyPrice: 0.02, PriceDate: "2026-12"}, VMID: 9000, Node: "pve1"},
			{Shape: sizing.Shape{Name: "large", CPUs: 8, MemoryMiB: 32768, GPUs: 1, GPUModel: "L4", DiskGiB: 200, HourlyPrice: 0.3, PriceDate: "2026-12"}, VMID: 9001, Node: "pve2"},
		},
	}
}

func newProvider(t *testing.T, srv *fakeapi.Server, edit ...func(*proxmox.Config)) connectors.Provider {
	t.Helper()
	t.Setenv(tokenEnv, token)
	cfg := config(srv)
	for _, e := range edit {
		e(&cfg)
	}
	p, err := proxmox.New(context.Background(), cfg, nil)
	require.NoError(t, err)
	return connectors.Checked(p)
}

func spec(n int) connectors.NodeGroupSpec {
	return connectors.NodeGroupSpec{Pool: pool, Size: "small", TargetSize: n}
}

const clonePath = "POST /api2/json/nodes/pve1/qemu/9000/clone"

func TestCatalogIsTheTemplatesWithPriceDateGPUAndDisk(t *testing.T) {
	p := newProvider(t, newFake(t))
	catalog, err := p.Catalog(context.Background())
	require.NoError(t, err)
	require.Len(t, catalog, 2)
	assert.Equal(t, "small", catalog[0].Name)
	assert.Equal(t, "2026-12", catalog[0].PriceDate)
	assert.Equal(t, int64(1), catalog[1].GPUs)
	assert.Equal(t, 200*types.GiB, catalog[1].EphemeralStorage)
	assert.InDelta(t, 0.3, catalog[1].HourlyPrice, 1e-9)
}

func TestCreateNodeGroupClonesTagsAndStarts(t *testing.T) {
	srv := newFake(t)
	srv.SetTaskPolls(4) // every task is still running when first polled
	p := newProvider(t, srv)
	ctx := context.Background()

	g, err := p.CreateNodeGroup(ctx, spec(2), "pool/acme/decision-7")
	require.NoError(t, err)
	assert.Equal(t, groupID, g.ID)
	assert.Equal(t, 2, g.TargetSize)
	require.Len(t, g.Instances, 2)
	vms := srv.VMs()
	require.Len(t, vms, 2)
	for _, v := range vms {
		assert.Equal(t, "running", v.Status, "a member is started once its clone finished")
		assert.Empty(t, v.Lock)
		assert.Contains(t, v.Tags, "visor-pool."+pool.NodePoolLabel())
		assert.Contains(t, v.Tags, "visor-size.small")
		assert.Equal(t, "pve1", v.Node)
	}
	for _, inst := range g.Instances {
		assert.Equal(t, connectors.InstanceRunning, inst.State)
	}
	assert.Equal(t, 2, fakehttp.CountPrefix(srv.Requests(), clonePath))
}

func TestScaleDownDestroysTheNewestAndDeleteNodesTakesNameOrID(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 4, "up"))
	vms := srv.VMs()
	require.Len(t, vms, 4)

	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "down"))
	left := srv.VMs()
	require.Len(t, left, 3)
	assert.Equal(t, vms[:3], left, "the newest VM went")

	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{left[0].Name, strconv.Itoa(left[1].VMID), "not-a-member"}, "del"))
	assert.Equal(t, []string{left[2].Name}, names(srv.VMs()))
	assert.Equal(t, 3, fakehttp.CountContaining(srv.Requests(), "/status/stop"), "each running VM is stopped before it is destroyed")
	assert.Equal(t, 3, fakehttp.CountPrefix(srv.Requests(), "DELETE /api2/json/nodes/pve1/qemu/"))

	// A second decision adds to the group without touching the member.
	require.NoError(t, p.SetTargetSize(ctx, groupID, 2, "up-again"))
	assert.Len(t, srv.VMs(), 2)
	assert.Contains(t, names(srv.VMs()), left[2].Name)
}

func names(vms []fakeapi.VM) []string {
	var out []string
	for _, v := range vms {
		out = append(out, v.Name)
	}
	return out
}

// A refused token and a clone out of memory are the conformance suite's.
func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	t.Run("a malformed token is refused by New without echoing it", func(t *testing.T) {
		srv := newFake(t)
		t.Setenv(tokenEnv, "just-a-password")
		_, err := proxmox.New(ctx, config(srv), nil)
		require.Error(t, err)
		assert.True(t, errclass.IsPermanent(err))
		assert.NotContains(t, err.Error(), "just-a-password")
	})
	t.Run("throttled with Retry-After", func(t *testing.T) {
		srv := newFake(t)
		p := newProvider(t, srv)
		srv.Inject(fakehttp.Fault{Path: "/api2/json/cluster/resources", Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}}})
		_, err := p.NodeGroups(ctx, pool)
		assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
		assert.Equal(t, 7*time.Second, errclass.RetryAfterOf(err))
	})
	t.Run("a missing template is NotFound", func(t *testing.T) {
		srv := newFake(t)
		p := newProvider(t, srv, func(c *proxmox.Config) { c.Templates[0].VMID = 9100 })
		err := p.SetTargetSize(ctx, groupID, 1, "k")
		assert.True(t, errclass.IsNotFound(err), "%v", err)
		assert.Contains(t, err.Error(), "9100.conf' does not exist")
	})
	t.Run("bad arguments change nothing", func(t *testing.T) {
		srv := newFake(t)
		p := connectors.Checked(newProvider(t, srv)) // as every worker builds it
		for _, err := range []error{
			p.SetTargetSize(ctx, "acme.shop.api.proxmox/huge", 1, "k"),
			p.SetTargetSize(ctx, "no-slash", 1, "k"),
			p.SetTargetSize(ctx, groupID, 1, ""),
			func() error {
				_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "huge", TargetSize: 1}, "k")
				return err
			}(),
		} {
			assert.True(t, errclass.IsPermanent(err), "%v", err)
		}
		assert.Equal(t, 0, fakehttp.CountPrefix(srv.Requests(), "POST "))
	})
}

func TestLeaksAreThePoolsVMsOutsideItsGroups(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	lf := p.(connectors.LeakFinder)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 1, "k"))
	member := srv.VMs()[0]
	srv.AddVM(fakeapi.VM{VMID: 500, Name: "odd-size", Node: "pve1", Tags: "visor-pool." + pool.NodePoolLabel() + ";visor-size.gone"})
	// A clone whose worker died before tagging it: the pool's name prefix.
	srv.AddVM(fakeapi.VM{VMID: 501, Name: member.Name[:10] + "small-0000000000", Node: "pve1"})
	srv.AddVM(fakeapi.VM{VMID: 502, Name: "stranger", Node: "pve2"})
	srv.AddVM(fakeapi.VM{VMID: 503, Name: "other-pool", Node: "pve2", Tags: "visor-pool.acme.shop.web.proxmox;visor-size.gone"})

	leaks, err := lf.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	var ids []string
	for _, l := range leaks {
		ids = append(ids, l.ID)
	}
	assert.ElementsMatch(t, []string{"500", "501"}, ids)

	err = lf.DeleteInstances(ctx, pool, []string{"500", strconv.Itoa(member.VMID)}, "gc")
	assert.True(t, errclass.IsPermanent(err), "a group member is refused: %v", err)
	assert.Len(t, srv.VMs(), 5, "nothing was destroyed")

	require.NoError(t, lf.DeleteInstances(ctx, pool, []string{"500", "501"}, "gc"))
	assert.ElementsMatch(t, []string{member.Name, "stranger", "other-pool"}, names(srv.VMs()))
	require.NoError(t, lf.DeleteInstances(ctx, pool, []string{"500"}, "gc"), "already gone is success")
}
