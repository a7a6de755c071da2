package gcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/gcp"
	"github.com/hanzoai/visor-fleet/connectors/gcp/fakecompute"
)

// Operations that stay RUNNING for several requests are waited to their
// end, and the MIG and template are what the connector promises: named
// from pool and size, the pool's labels in the description (a label's
// "/" intact), the boot disk of the catalog, the cluster-join user data,
// GPUs stopping for host maintenance.
func TestCreateWaitsForOperationsThatFinishLater(t *testing.T) {
	srv := newFake(t)
	srv.SetPending(4)
	t.Setenv(keyEnv, string(fakecompute.KeyFile(email, srv.TokenURL(), keys()[0])))
	join := filepath.Join(t.TempDir(), "join.yaml")
	require.NoError(t, os.WriteFile(join, []byte("#cloud-config\nruncmd: [kubeadm join]\n"), 0o600))
	cfg := config(srv, "env:"+keyEnv)
	cfg.ClusterJoin = connectors.CredentialRef("file:" + join)
	cfg.BootDiskGB = 80
	p, err := gcp.NewWith(context.Background(), cfg, nil, testOptions)
	require.NoError(t, err)
	ctx := context.Background()

	labels := map[string]string{"team": "shop", "hanzo.ai/org": "acme"}
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "g2-standard-4", TargetSize: 2, Labels: labels}, "k-create")
	require.NoError(t, err)
	assert.Equal(t, gcp.GroupName(pool.NodePoolLabel(), "g2-standard-4"), g.ID)
	assert.Equal(t, "g2-standard-4", g.Size)
	assert.Equal(t, 2, g.TargetSize)
	assert.Equal(t, labels, g.Labels)
	require.Len(t, g.Instances, 2)
	for _, in := range g.Instances {
		assert.True(t, strings.HasPrefix(in.Name, g.ID+"-"), in.Name)
		assert.NotEqual(t, in.Name, in.ID, "a VM has Compute's numeric ID")
		assert.False(t, in.CreatedAt.IsZero(), "the VM's creationTimestamp")
	}

	tmpl := srv.Templates()[g.ID]
	var props struct {
		MachineType string
		Labels      map[string]string
		Disks       []struct {
			Boot             bool
			InitializeParams struct {
				DiskSizeGb  string
				SourceImage string
			}
		}
		Metadata   struct{ Items []struct{ Key, Value string } }
		Scheduling struct{ OnHostMaintenance string }
	}
	require.NoError(t, json.Unmarshal(tmpl.Properties, &props))
	assert.Equal(t, "g2-standard-4", props.MachineType)
	assert.Equal(t, g.ID, props.Labels[gcp.LabelGroup])
	require.Len(t, props.Disks, 1)
	assert.Equal(t, "80", props.Disks[0].InitializeParams.DiskSizeGb)
	assert.Equal(t, cfg.Image, props.Disks[0].InitializeParams.SourceImage)
	require.Len(t, props.Metadata.Items, 1)
	assert.Equal(t, "user-data", props.Metadata.Items[0].Key)
	assert.Equal(t, "#cloud-config\nruncmd: [kubeadm join]", props.Metadata.Items[0].Value)
	assert.Equal(t, "TERMINATE", props.Scheduling.OnHostMaintenance)

	catalog, err := p.Catalog(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(80)<<30, catalog[0].EphemeralStorage, "the configured boot disk is every size's root disk")

	require.NoError(t, p.SetTargetSize(ctx, g.ID, 4, "k-up"))
	require.NoError(t, p.SetTargetSize(ctx, g.ID, 4, "k-up"))
	groups, err := p.NodeGroups(ctx, pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Len(t, groups[0].Instances, 4)
	assert.Equal(t, 1, srv.Count("/resize?"), "the same target twice is one resize")
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r, "POST") && !strings.Contains(r, "/wait") && !strings.Contains(r, "listManagedInstances") && !strings.HasPrefix(r, "POST /token") {
			assert.Contains(t, r, "requestId=", "every mutating call carries a requestId: %s", r)
		}
	}
}

// A create whose operation is lost is retried with the same requestId,
// which Compute answers with the first call's operation.
func TestARepeatedRequestIDIsOneOperation(t *testing.T) {
	srv, p := started(t)
	ctx := context.Background()
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "e2-standard-4", TargetSize: 1}, "k")
	require.NoError(t, err)
	srv.Inject(fakehttp.Fault{Method: http.MethodPost, Path: "/compute/v1/projects/" + project + "/zones/" + zone + "/instanceGroupManagers/" + g.ID + "/resize",
		AfterApply: true, Status: http.StatusServiceUnavailable, Body: backendError})
	err = p.SetTargetSize(ctx, g.ID, 3, "k-up")
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "%v", err)
	require.NoError(t, p.SetTargetSize(ctx, g.ID, 3, "k-up"))
	assert.Equal(t, 3, srv.Groups()[g.ID].TargetSize)
	assert.Equal(t, 3, srv.Machines(g.ID))
}

// A scale-up the MIG cannot fully make (quota) drops the refused records,
// so the target comes back to what runs and the MIG stops retrying.
func TestARefusedScaleUpLowersTheTargetToWhatRuns(t *testing.T) {
	srv, p := started(t)
	ctx := context.Background()
	g, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "e2-standard-2", TargetSize: 1}, "k")
	require.NoError(t, err)
	srv.SetQuota(2)
	err = p.SetTargetSize(ctx, g.ID, 4, "k-up")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "QUOTA_EXCEEDED")
	got := srv.Groups()[g.ID]
	assert.Equal(t, 2, got.TargetSize, "the one instance the quota allowed is kept, the refused two are dropped")
	assert.Equal(t, 2, srv.Machines(g.ID))

	srv.SetUnavailable("e2-standard-2", true)
	err = p.SetTargetSize(ctx, g.ID, 3, "k-up-2")
	assert.True(t, errclass.IsInsufficientCapacity(err), "%v", err)
	assert.Equal(t, 2, srv.Groups()[g.ID].TargetSize)
}

func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	spec := connectors.NodeGroupSpec{Pool: pool, Size: "e2-standard-2", TargetSize: 1}
	t.Run("an operation that ends in an error is classified by its code", func(t *testing.T) {
		for code, want := range map[string]errclass.Class{
			"QUOTA_EXCEEDED":               errclass.Permanent,
			"ZONE_RESOURCE_POOL_EXHAUSTED": errclass.InsufficientCapacity,
			"RESOURCE_NOT_READY":           errclass.Retryable,
		} {
			srv, p := started(t)
			srv.FailNextOperation(http.StatusForbidden, code, "refused by the test")
			_, err := p.CreateNodeGroup(ctx, spec, "k")
			assert.Equal(t, want, errclass.Of(err), "%s: %v", code, err)
			assert.Zero(t, srv.Machines(gcp.GroupPrefix(pool.NodePoolLabel())))
		}
	})
	t.Run("rate limits are RateLimited with a wait", func(t *testing.T) {
		srv, p := started(t)
		srv.Inject(fakehttp.Fault{Method: http.MethodGet, Status: http.StatusForbidden, Header: http.Header{"Retry-After": {"7"}},
			Body: []byte(`{"error":{"code":403,"message":"Rate Limit Exceeded","errors":[{"message":"Rate Limit Exceeded","domain":"usageLimits","reason":"rateLimitExceeded"}]}}`)})
		_, err := p.NodeGroups(ctx, pool)
		assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
		assert.Equal(t, "7s", errclass.RetryAfterOf(err).String())
	})
	t.Run("a permission refused names the reference", func(t *testing.T) {
		srv, p := started(t)
		srv.Inject(fakehttp.Fault{Method: http.MethodGet, Status: http.StatusForbidden,
			Body: []byte(`{"error":{"code":403,"message":"Required 'compute.instanceGroupManagers.list' permission","errors":[{"message":"Required permission","domain":"global","reason":"forbidden"}]}}`)})
		_, err := p.NodeGroups(ctx, pool)
		assert.True(t, errclass.IsPermanent(err), "%v", err)
		assert.Contains(t, err.Error(), "env:"+keyEnv)
	})
	t.Run("what is not there", func(t *testing.T) {
		srv, p := started(t)
		assert.True(t, errclass.IsNotFound(p.SetTargetSize(ctx, "visor-0000000000-e2-standard-2", 3, "k")))
		require.NoError(t, p.DeleteNodeGroup(ctx, "visor-0000000000-e2-standard-2", "k"), "a group already gone is success")
		before := len(srv.Requests())
		_, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "m9-imaginary-1", TargetSize: 1}, "k")
		assert.True(t, errclass.IsPermanent(err), "%v", err)
		_, err = p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "t2a-standard-4", TargetSize: 1}, "k")
		assert.ErrorContains(t, err, "imageArm64")
		_, err = p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "e2-standard-2", TargetSize: 1, Zone: "europe-west1-b"}, "k")
		assert.True(t, errclass.IsPermanent(err), "%v", err)
		assert.ErrorContains(t, err, `spec.zone "europe-west1-b"`)
		assert.Len(t, srv.Requests(), before, "refused before any call")
	})
}

func TestNewNamesEveryMissingSettingAndNeverTheKey(t *testing.T) {
	t.Setenv(keyEnv, "not-a-key-file-but-a-secret")
	_, err := gcp.New(context.Background(), gcp.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:" + keyEnv}, Zone: "usc1", BootDiskGB: -1}, nil)
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	for _, field := range []string{"project", "image", "zone", "bootDiskGB"} {
		assert.Contains(t, err.Error(), field)
	}
	srv := newFake(t)
	_, err = gcp.New(context.Background(), config(srv, "env:"+keyEnv), nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:"+keyEnv)
	assert.NotContains(t, err.Error(), "not-a-key-file-but-a-secret")
}
