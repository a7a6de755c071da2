package azure_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/azure"
	"github.com/hanzoai/visor-fleet/connectors/azure/fakearm"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func started(t *testing.T) (*fakearm.Server, *azure.Provider) {
	t.Helper()
	srv := fakearm.New(tenant, client, secret)
	t.Setenv(credEnv, principal)
	p, err := newProvider(t, srv, "env:"+credEnv)
	require.NoError(t, err)
	return srv, p
}

// Operations that answer "in progress" several times are polled to their
// end, and the scale set is the model the connector promises: tagged for
// the pool, capacity the target, the catalog's root disk, custom data.
func TestCreateWaitsForOperationsThatFinishLater(t *testing.T) {
	srv := fakearm.New(tenant, client, secret)
	srv.PendingPolls = 3
	t.Setenv(credEnv, principal)
	join := filepath.Join(t.TempDir(), "join.yaml")
	require.NoError(t, os.WriteFile(join, []byte("#cloud-config\nruncmd: [kubeadm join]\n"), 0o600))
	cfg := config("env:" + credEnv)
	cfg.ClusterJoin = connectors.CredentialRef("file:" + join)
	p, err := azure.NewWith(context.Background(), cfg, nil, azure.Options{Transport: srv, PollFrequency: 1})
	require.NoError(t, err)
	ctx := context.Background()

	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "Standard_D4s_v5", TargetSize: 2, Labels: map[string]string{"team": "shop", "hanzo.ai/org": "acme"}}, "k-create")
	require.NoError(t, err)
	assert.Equal(t, azure.ScaleSetName(pool.NodePoolLabel(), "Standard_D4s_v5"), g.ID)
	assert.Equal(t, "Standard_D4s_v5", g.Size)
	assert.Equal(t, 2, g.TargetSize)
	assert.Equal(t, map[string]string{"team": "shop", "hanzo.ai/org": "acme"}, g.Labels, "a label's \"/\" survives the tag's \":\"")
	require.Len(t, g.Instances, 2)
	assert.False(t, g.Instances[0].CreatedAt.IsZero())

	set := srv.ScaleSets()[g.ID]
	assert.Equal(t, pool.NodePoolLabel(), *set.Tags[azure.TagPool])
	assert.Equal(t, "acme", *set.Tags["hanzo.ai:org"])
	assert.Equal(t, int32(128), *set.Properties.VirtualMachineProfile.StorageProfile.OSDisk.DiskSizeGB)
	data, err := base64.StdEncoding.DecodeString(*set.Properties.VirtualMachineProfile.OSProfile.CustomData)
	require.NoError(t, err)
	assert.Equal(t, "#cloud-config\nruncmd: [kubeadm join]", string(data))

	require.NoError(t, p.SetTargetSize(ctx, g.ID, 4, "k-up"))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Len(t, groups[0].Instances, 4)
	puts := slices.DeleteFunc(srv.Calls(), func(c string) bool { return c != fakearm.OpCreateOrUpdate && c != fakearm.OpUpdate })
	assert.Equal(t, []string{fakearm.OpCreateOrUpdate, fakearm.OpUpdate}, puts)
}

func TestThrottledIsRateLimited(t *testing.T) {
	srv, p := started(t)
	srv.Inject(fakearm.Fault{Op: fakearm.OpList, Status: http.StatusTooManyRequests, Code: "SubscriptionRequestsThrottled"})
	_, err := p.NodeGroups(context.Background(), pool)
	assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
	assert.Positive(t, errclass.RetryAfterOf(err))
}

func TestErrorCodesAreClassified(t *testing.T) {
	for code, want := range map[string]errclass.Class{
		"AllocationFailed":    errclass.InsufficientCapacity,
		"QuotaExceeded":       errclass.Permanent,
		"InvalidParameter":    errclass.Permanent,
		"Conflict":            errclass.Retryable,
		"InternalServerError": errclass.Retryable,
	} {
		t.Run(code, func(t *testing.T) {
			srv, p := started(t)
			srv.Inject(fakearm.Fault{Op: fakearm.OpCreateOrUpdate, Status: http.StatusBadRequest, Code: code})
			_, err := p.CreateNodeGroup(context.Background(), connectors.NodeGroupSpec{Pool: pool, Size: "Standard_D2s_v5", TargetSize: 1}, "k")
			assert.Equal(t, want, errclass.Of(err), "%v", err)
			assert.Zero(t, srv.Machines(azure.TagPool, pool.NodePoolLabel()))
		})
	}
}

// A size outside the catalog (connectors.Checked refuses it, for every
// provider) or a reserved tag (Azure's own rule) is refused before any
// call; a scale set that is not there is NotFound to resize and gone to
// delete.
func TestRefusesWhatVisorDoesNotManage(t *testing.T) {
	srv, p := started(t)
	ctx := context.Background()
	_, err := connectors.Checked(p).CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "Standard_Imaginary", TargetSize: 1}, "k")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.ErrorContains(t, err, `spec.size: azure does not sell size "Standard_Imaginary"`)
	_, err = p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "Standard_D2s_v5", TargetSize: 1, Labels: map[string]string{azure.TagPool: "x"}}, "k")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Empty(t, srv.Calls())

	assert.True(t, errclass.IsNotFound(p.SetTargetSize(ctx, "hand-made", 3, "k")))
	require.NoError(t, p.DeleteNodeGroup(ctx, "hand-made", "k"), "a scale set already gone is success")
}

func TestNewNamesEveryMissingSetting(t *testing.T) {
	t.Setenv(credEnv, principal)
	_, err := azure.New(context.Background(), azure.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:" + credEnv}, RetryMax: -1}, nil)
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	for _, field := range []string{"subscriptionID", "resourceGroup", "location", "subnetID", "image", "sshPublicKey", "retryMax"} {
		assert.Contains(t, err.Error(), field)
	}
	t.Setenv(credEnv, "only-one-part")
	_, err = azure.New(context.Background(), config("env:"+credEnv), nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:"+credEnv)
	assert.NotContains(t, err.Error(), "only-one-part")
}
