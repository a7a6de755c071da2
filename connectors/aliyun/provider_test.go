package aliyun_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/aliyun"
	"github.com/hanzoai/visor-fleet/connectors/aliyun/fakeapi"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	accessKeyID  = "LTAI5tFakeAccessKeyID"
	accessSecret = "fake-secret-3f9a1c7e"
	keyEnv       = "VISOR_TEST_ALIYUN_KEY"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "aliyun", Cluster: "useast1"}

var groupID = aliyun.GroupID(pool.NodePoolLabel(), "ecs.g7.large")

func newFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(accessKeyID)
	t.Cleanup(srv.Close)
	return srv
}

func config(srv *fakeapi.Server) aliyun.Config {
	return aliyun.Config{
		CommonConfig:    connectors.CommonConfig{Credentials: "env:" + keyEnv},
		RegionID:        "us-east-1",
		ImageID:         "ubuntu_24_04_x64_20G_alibase_20261101.vhd",
		SecurityGroupID: "sg-0xfake",
		VSwitchID:       "vsw-0xfake",
		Endpoint:        srv.Endpoint(),
		Protocol:        "http",
		SystemDiskGiB:   80,
	}
}

func newProvider(t *testing.T, srv *fakeapi.Server) connectors.Provider {
	t.Helper()
	t.Setenv(keyEnv, accessKeyID+":"+accessSecret)
	p, err := aliyun.New(context.Background(), config(srv), nil)
	require.NoError(t, err)
	return connectors.Checked(p)
}

func TestCatalogHasPricesGPUsAndTheConfiguredSystemDisk(t *testing.T) {
	p := newProvider(t, newFake(t))
	catalog, err := p.Catalog(context.Background())
	require.NoError(t, err)
	byName := map[string]types.InstanceType{}
	for _, it := range catalog {
		byName[it.Name] = it
		assert.Equal(t, "2026-11", it.PriceDate)
		assert.Positive(t, it.HourlyPrice)
		assert.Equal(t, 80*types.GiB, it.EphemeralStorage, "the configured system disk is every type's root disk")
	}
	assert.Equal(t, int64(1), byName["ecs.gn7i-c8g1.2xlarge"].GPUs)
	assert.Equal(t, "A10", byName["ecs.gn7i-c8g1.2xlarge"].GPUModel)
	assert.Equal(t, int64(40*types.GiB), aliyun.Catalog()[0].EphemeralStorage, "the built-in catalog has ECS's default 40 GiB")
}

func TestRunInstancesCarriesTagsInOneCall(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "ecs.g7.large", TargetSize: 3, Labels: map[string]string{"team": "shop"}}
	g, err := p.CreateNodeGroup(ctx, spec, "pool/acme/decision-3")
	require.NoError(t, err)
	assert.Equal(t, groupID, g.ID)
	require.Len(t, g.Instances, 3)
	for _, in := range srv.Instances() {
		assert.Equal(t, pool.NodePoolLabel(), in.Tags[aliyun.TagPool])
		assert.Equal(t, "ecs.g7.large", in.Tags[aliyun.TagSize])
		assert.Equal(t, "shop", in.Tags["team"])
	}
	assert.Equal(t, 1, fakehttp.CountContaining(srv.Requests(), "Amount=3"), "one RunInstances for all three")

	// A resize by another decision keeps the tenant's tags.
	require.NoError(t, p.SetTargetSize(ctx, groupID, 4, "pool/acme/decision-4"))
	insts := srv.Instances()
	require.Len(t, insts, 4)
	assert.Equal(t, "shop", insts[3].Tags["team"])
}

func TestScaleDownReleasesTheNewestAndDeleteNodesTakesHostNameOrID(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 4, "up"))
	all := srv.Instances()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "down"))
	assert.Equal(t, ids(all[:3]), ids(srv.Instances()), "the newest instance went")

	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{all[0].HostName, all[1].ID, "gone"}, "del"))
	left := srv.Instances()
	require.Len(t, left, 1)
	assert.Equal(t, all[2].ID, left[0].ID)
}

func ids(insts []fakeapi.Instance) []string {
	var out []string
	for _, in := range insts {
		out = append(out, in.ID)
	}
	return out
}

// Quota, capacity and auth refusals are the conformance suite's.
func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	t.Run("throttling is RateLimited", func(t *testing.T) {
		srv := newFake(t)
		p := newProvider(t, srv)
		srv.Inject(fakehttp.Fault{Status: http.StatusBadRequest, Body: []byte(`{"RequestId":"x","Code":"Throttling.User","Message":"Request was denied due to user flow control."}`)})
		_, err := p.NodeGroups(ctx, pool)
		assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
		assert.Positive(t, errclass.RetryAfterOf(err))
	})
	t.Run("bad arguments reach nothing", func(t *testing.T) {
		srv := newFake(t)
		p := connectors.Checked(newProvider(t, srv)) // as every worker builds it
		for _, err := range []error{
			p.SetTargetSize(ctx, "acme.shop.api.aliyun/g7.large", 1, "k"),
			p.SetTargetSize(ctx, groupID, 1, ""),
			func() error {
				_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "ecs.g7.large", TargetSize: 1, Labels: map[string]string{"visor-pool": "x"}}, "k")
				return err
			}(),
		} {
			assert.True(t, errclass.IsPermanent(err), "%v", err)
		}
		assert.Empty(t, srv.Requests())
	})
}

func TestLeaksAreThePoolsInstancesOutsideItsGroups(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	lf := p.(connectors.LeakFinder)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 1, "k"))
	member := srv.Instances()[0]
	noSize := srv.AddInstance("by-hand", "ecs.g7.large", map[string]string{aliyun.TagPool: pool.NodePoolLabel()})
	retyped := srv.AddInstance("retyped", "ecs.c7.large", map[string]string{aliyun.TagPool: pool.NodePoolLabel(), aliyun.TagSize: "ecs.g7.large"})
	srv.AddInstance("other", "ecs.g7.large", map[string]string{aliyun.TagPool: "acme.shop.web.aliyun"})

	leaks, err := lf.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	var ids []string
	for _, l := range leaks {
		ids = append(ids, l.ID)
	}
	assert.ElementsMatch(t, []string{noSize.ID, retyped.ID}, ids)

	err = lf.DeleteInstances(ctx, pool, []string{noSize.ID, member.ID}, "gc")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Len(t, srv.Instances(), 4)
	require.NoError(t, lf.DeleteInstances(ctx, pool, ids, "gc"))
	assert.Len(t, srv.Instances(), 2)
	require.NoError(t, lf.DeleteInstances(ctx, pool, ids, "gc"), "already gone is success")
}
