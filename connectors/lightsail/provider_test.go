package lightsail_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/lightsail"
	"github.com/hanzoai/visor-fleet/connectors/lightsail/fakelightsail"
)

var groupID = lightsail.GroupID(pool.NodePoolLabel(), "medium_3_0")

func names(insts []fakelightsail.Instance) []string {
	var out []string
	for _, in := range insts {
		out = append(out, in.Name)
	}
	return out
}

// Each instance is created tagged, under a name from the decision's key,
// with the join script naming it; a repeat creates nothing; a resize by
// another decision keeps the tenant's tags; listing follows pages.
func TestCreateTagsNamesAndARepeatCreatesNothing(t *testing.T) {
	srv := newFake(t)
	t.Setenv(keyEnv, accessKey+":"+secretKey)
	join := filepath.Join(t.TempDir(), "join.sh")
	require.NoError(t, os.WriteFile(join, []byte("#!/bin/sh\nk3s agent --node-name {{nodeName}}\n"), 0o600))
	cfg := config(srv, "env:"+keyEnv)
	cfg.ClusterJoin = connectors.CredentialRef("file:" + join)
	p, err := lightsail.New(context.Background(), cfg, nil)
	require.NoError(t, err)
	ctx := context.Background()

	spec := connectors.NodeGroupSpec{Pool: pool, Size: "medium_3_0", TargetSize: 3, Labels: map[string]string{"team": "shop", "hanzo.ai/org": "acme"}}
	g, err := p.CreateNodeGroup(ctx, spec, "pool/acme/decision-3")
	require.NoError(t, err)
	assert.Equal(t, groupID, g.ID)
	assert.Equal(t, 3, g.TargetSize)
	assert.Equal(t, map[string]string{"team": "shop", "hanzo.ai/org": "acme"}, g.Labels)
	require.Len(t, g.Instances, 3)
	for _, in := range srv.Instances() {
		assert.Equal(t, pool.NodePoolLabel(), in.Tags[lightsail.TagPool])
		assert.Equal(t, "medium_3_0", in.Tags[lightsail.TagSize])
		assert.Equal(t, "acme", in.Tags["hanzo.ai/org"])
		assert.Equal(t, "#!/bin/sh\nk3s agent --node-name "+in.Name, in.UserData)
	}

	_, err = p.CreateNodeGroup(ctx, spec, "pool/acme/decision-3")
	require.NoError(t, err)
	assert.Len(t, srv.Instances(), 3, "the same key creates nothing new")

	require.NoError(t, p.SetTargetSize(ctx, groupID, 5, "pool/acme/decision-4"))
	insts := srv.Instances()
	require.Len(t, insts, 5)
	assert.Equal(t, "shop", insts[4].Tags["team"])
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Len(t, groups[0].Instances, 5, "GetInstances answers in pages of three")
}

func TestScaleDownDeletesTheNewestAndDeleteNodesTakesNameOrARN(t *testing.T) {
	srv, p := started(t)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 4, "up"))
	all := srv.Instances()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "down"))
	assert.Equal(t, 3, srv.Machines(lightsail.TagPool, pool.NodePoolLabel()))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	var listed []string
	for _, in := range groups[0].Instances {
		listed = append(listed, in.Name)
	}
	assert.Equal(t, names(all[:3]), listed, "the newest instance went")

	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{all[0].Name, all[1].Arn, "gone"}, "del"))
	assert.Equal(t, 1, srv.Machines(lightsail.TagPool, pool.NodePoolLabel()))
	require.NoError(t, p.DeleteNodeGroup(ctx, groupID, "dereg"))
	assert.Zero(t, srv.Machines(lightsail.TagPool, pool.NodePoolLabel()))
	require.NoError(t, p.DeleteNodeGroup(ctx, groupID, "dereg"), "a group already gone is success")
}

func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	t.Run("a refused key names the reference, never the secret", func(t *testing.T) {
		srv := newFake(t)
		t.Setenv(keyEnv, accessKey+":wrong-secret-value")
		p, err := lightsail.New(ctx, config(srv, "env:"+keyEnv), nil)
		require.NoError(t, err)
		_, err = p.NodeGroups(ctx, pool)
		assert.True(t, errclass.IsPermanent(err), "%v", err)
		assert.Contains(t, err.Error(), "env:"+keyEnv)
		assert.Contains(t, err.Error(), "InvalidSignatureException")
		assert.NotContains(t, err.Error(), "wrong-secret-value")
	})
	t.Run("the instance limit is Permanent, no capacity InsufficientCapacity", func(t *testing.T) {
		srv, p := started(t)
		srv.SetQuota(1)
		err := p.SetTargetSize(ctx, groupID, 2, "k")
		assert.True(t, errclass.IsPermanent(err), "%v", err)
		assert.Contains(t, err.Error(), "maximum number of instances")
		assert.Equal(t, 1, srv.Machines(lightsail.TagPool, pool.NodePoolLabel()), "the first went through; a retry asks only for the second")
		srv.SetQuota(-1)
		srv.SetUnavailable("medium_3_0", true)
		err = p.SetTargetSize(ctx, groupID, 2, "k")
		assert.True(t, errclass.IsInsufficientCapacity(err), "%v", err)
	})
	t.Run("throttling is RateLimited", func(t *testing.T) {
		srv, p := started(t)
		srv.Inject(fakehttp.Fault{Match: fakelightsail.Action("GetInstances"), Status: http.StatusBadRequest,
			Body: []byte(`{"__type":"ThrottlingException","message":"Rate exceeded"}`)})
		_, err := p.NodeGroups(ctx, pool)
		assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
		assert.Positive(t, errclass.RetryAfterOf(err))
		srv.Inject(fakehttp.Fault{Match: fakelightsail.Action("GetInstances"), Status: http.StatusBadRequest,
			Body: []byte(`{"__type":"RequestLimitExceeded","message":"Request limit exceeded."}`)})
		_, err = p.NodeGroups(ctx, pool)
		assert.Equal(t, errclass.RateLimited, errclass.Of(err), "a request limit is a throttle, not a quota: %v", err)
	})
	t.Run("bad arguments reach nothing", func(t *testing.T) {
		srv, raw := started(t)
		p := connectors.Checked(raw) // as every worker builds it
		for _, err := range []error{
			p.SetTargetSize(ctx, "acme.shop.api.lightsail/Medium", 1, "k"),
			p.SetTargetSize(ctx, groupID, 1, ""),
			func() error {
				_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "nano_3_0", TargetSize: 1}, "k")
				return err
			}(),
			func() error {
				_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "medium_3_0", TargetSize: 1, Labels: map[string]string{"visor-pool": "x"}}, "k")
				return err
			}(),
		} {
			assert.True(t, errclass.IsPermanent(err), "%v", err)
		}
		assert.Empty(t, srv.Requests())
	})
}

func TestLeaksAreThePoolsInstancesOutsideItsGroups(t *testing.T) {
	srv, p := started(t)
	ctx := context.Background()
	require.NoError(t, p.SetTargetSize(ctx, groupID, 1, "k"))
	member := srv.Instances()[0]
	noSize := srv.AddInstance("by-hand", "medium_3_0", map[string]string{lightsail.TagPool: pool.NodePoolLabel()})
	rebundled := srv.AddInstance("rebundled", "large_3_0", map[string]string{lightsail.TagPool: pool.NodePoolLabel(), lightsail.TagSize: "medium_3_0"})
	srv.AddInstance("other", "medium_3_0", map[string]string{lightsail.TagPool: "acme.shop.web.lightsail"})

	leaks, err := p.LeakedInstances(ctx, pool)
	require.NoError(t, err)
	var ids []string
	for _, l := range leaks {
		ids = append(ids, l.ID)
	}
	assert.ElementsMatch(t, []string{noSize.Arn, rebundled.Arn}, ids)

	err = p.DeleteInstances(ctx, pool, []string{noSize.Arn, member.Arn}, "gc")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Equal(t, 4, len(srv.Instances()))
	require.NoError(t, p.DeleteInstances(ctx, pool, ids, "gc"))
	assert.Equal(t, 1, srv.Machines(lightsail.TagPool, pool.NodePoolLabel()), "the member is left")
	assert.Equal(t, 1, srv.Machines(lightsail.TagPool, "acme.shop.web.lightsail"), "another pool's instance is left")
	require.NoError(t, p.DeleteInstances(ctx, pool, ids, "gc"), "already gone is success")
}

func TestNewNamesEveryMissingSettingAndNeverTheKey(t *testing.T) {
	t.Setenv(keyEnv, "only-one-part")
	_, err := lightsail.New(context.Background(), lightsail.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:" + keyEnv}, IPAddressType: "ipv5"}, nil)
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	for _, field := range []string{"region", "availabilityZone", "blueprintID", "ipAddressType"} {
		assert.Contains(t, err.Error(), field)
	}
	_, err = lightsail.New(context.Background(), config(newFake(t), "env:"+keyEnv), nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:"+keyEnv)
	assert.NotContains(t, err.Error(), "only-one-part")
}
