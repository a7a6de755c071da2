package hetzner_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/connectors/hetzner/fakeapi"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	token    = "hcloud-secret-token-5e2a9c"
	tokenEnv = "VISOR_TEST_HCLOUD_TOKEN"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "hetzner", Cluster: "nbg1"}

var groupID = hetzner.GroupID(pool.NodePoolLabel(), "cx22")

func newFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(token)
	t.Cleanup(srv.Close)
	return srv
}

func newProvider(t *testing.T, srv *fakeapi.Server, edit ...func(*hetzner.Config)) *hetzner.Provider {
	t.Helper()
	t.Setenv(tokenEnv, token)
	cfg := hetzner.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:" + tokenEnv}, BaseURL: srv.URL1(), Location: "fsn1", Image: "ubuntu-24.04"}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := hetzner.New(context.Background(), cfg, nil)
	require.NoError(t, err)
	return p
}

func spec(n int) connectors.NodeGroupSpec {
	return connectors.NodeGroupSpec{Pool: pool, Size: "cx22", TargetSize: n, Labels: map[string]string{"team": "shop"}}
}

func names(servers []schema.Server) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.Name)
	}
	return out
}

// The servers' names, labels and create requests; that a repeat with the
// key creates nothing is the conformance suite's.
func TestCreateNodeGroupCreatesLabelledServers(t *testing.T) {
	srv := newFake(t)
	sshID := srv.AddSSHKey("ops")
	netID := srv.AddNetwork("k8s")
	joinFile := filepath.Join(t.TempDir(), "join.yaml")
	require.NoError(t, os.WriteFile(joinFile, []byte("#cloud-config\nruncmd: [kubeadm join]\n"), 0o600))
	p := newProvider(t, srv, func(c *hetzner.Config) {
		c.SSHKeys = []string{"ops"}
		c.Network = "k8s"
		c.ClusterJoin = connectors.CredentialRef("file:" + joinFile)
	})
	ctx := context.Background()
	const key = connectors.IdempotencyKey("pool/acme/shop/api/hetzner/nbg1#3")

	g, err := p.CreateNodeGroup(ctx, spec(3), key)
	require.NoError(t, err)
	assert.Equal(t, "acme.shop.api.hetzner/cx22", g.ID)
	assert.Equal(t, "cx22", g.Size)
	assert.Equal(t, 3, g.TargetSize)
	require.Len(t, g.Instances, 3)
	assert.Equal(t, connectors.InstanceCreating, g.Instances[0].State)

	servers := srv.Servers()
	require.Len(t, servers, 3)
	keys := map[string]bool{}
	for _, s := range servers {
		assert.Regexp(t, `^[0-9a-f]{8}-cx22-[0-9a-f]{10}$`, s.Name)
		assert.Equal(t, "acme.shop.api.hetzner", s.Labels[hetzner.LabelPool])
		assert.Equal(t, "cx22", s.Labels[hetzner.LabelSize])
		assert.Equal(t, "shop", s.Labels["team"])
		keys[s.Labels[hetzner.LabelKey]] = true
		assert.Equal(t, []schema.ServerPrivateNet{{Network: netID, IP: s.PrivateNet[0].IP}}, s.PrivateNet)
	}
	assert.Len(t, keys, 3, "each server carries its own key label")
	for _, req := range srv.CreateRequests() {
		assert.Equal(t, "#cloud-config\nruncmd: [kubeadm join]", req.UserData)
		assert.Equal(t, []int64{sshID}, req.SSHKeys)
		assert.Equal(t, "fsn1", req.Location)
		assert.Equal(t, "ubuntu-24.04", req.Image.Name)
	}
}

func TestNodeGroupsGroupsThePoolsServersByType(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ours := func(size string) map[string]string {
		return map[string]string{hetzner.LabelPool: "acme.shop.api.hetzner", hetzner.LabelSize: size}
	}
	srv.AddServer("a1", "cx32", ours("cx32"))
	b1 := srv.AddServer("b1", "cx22", ours("cx22"))
	b2 := srv.AddServer("b2", "cx22", ours("cx22"))
	srv.AddServer("other", "cx22", map[string]string{hetzner.LabelPool: "acme.shop.web.hetzner", hetzner.LabelSize: "cx22"})
	srv.AddServer("bastion", "cx22", nil)
	srv.SetStatus("b2", "deleting")

	groups, err := p.NodeGroups(context.Background(), pool)
	require.NoError(t, err)
	require.Len(t, groups, 2)
	assert.Equal(t, groupID, groups[0].ID)
	assert.Equal(t, 1, groups[0].TargetSize, "a server being deleted is not part of the target")
	assert.Equal(t, []connectors.Instance{
		{ID: "2", Name: "b1", State: connectors.InstanceRunning, CreatedAt: b1.Created},
		{ID: "3", Name: "b2", State: connectors.InstanceDeleting, CreatedAt: b2.Created},
	}, groups[0].Instances)
	assert.Equal(t, "acme.shop.api.hetzner/cx32", groups[1].ID)
	assert.Equal(t, 1, groups[1].TargetSize)
}

func TestSetTargetSizeCreatesUpAndDeletesNewestDown(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	_, err := p.CreateNodeGroup(ctx, spec(1), "k-create")
	require.NoError(t, err)
	first := srv.Servers()[0].Name

	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "k-up"))
	servers := srv.Servers()
	require.Len(t, servers, 3)
	for _, s := range servers {
		assert.Equal(t, "shop", s.Labels["team"], "labels carried over to the added servers")
	}
	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "k-up"))
	assert.Equal(t, 3, fakehttp.CountPrefix(srv.Requests(), "POST /v1/servers"))

	require.NoError(t, p.SetTargetSize(ctx, groupID, 1, "k-down"))
	assert.Equal(t, []string{first}, names(srv.Servers()), "the newest went, the oldest stayed")
	assert.Equal(t, 2, fakehttp.CountPrefix(srv.Requests(), "DELETE /v1/servers/"))
}

func TestSetTargetSizeRetryAfterPartialSuccessCreatesOnlyTheRest(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	// The second create fails before taking effect.
	srv.Fail(fakehttp.Fault{Method: http.MethodPost, Path: "/v1/servers", Skip: 1, Status: 500}, "server_error", "internal error")

	err := p.SetTargetSize(ctx, groupID, 3, "k-partial")
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "%v", err)
	assert.Len(t, srv.Servers(), 1)

	require.NoError(t, p.SetTargetSize(ctx, groupID, 3, "k-partial"))
	assert.Len(t, srv.Servers(), 3)
	assert.Equal(t, 4, fakehttp.CountPrefix(srv.Requests(), "POST /v1/servers"), "1 made, 1 failed, 2 more on the retry")
}

// hcloud-go's own retry repeats a POST whose answer was a 502: the
// repeat meets uniqueness_error, and the server found by name is ours.
func TestRepeatedPostMeetingUniquenessErrorAcceptsOurServer(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv, func(c *hetzner.Config) { c.RetryMax = 1 })
	srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 502, AfterApply: true}, "bad_gateway", "bad gateway")

	g, err := p.CreateNodeGroup(context.Background(), spec(1), "k-unique")
	require.NoError(t, err)
	require.Len(t, srv.Servers(), 1)
	assert.Equal(t, 1, g.TargetSize)
	reqs := srv.Requests()
	assert.Equal(t, 2, fakehttp.CountPrefix(reqs, "POST /v1/servers"), "%v", reqs)
	assert.True(t, slices.ContainsFunc(reqs, func(r string) bool { return strings.Contains(r, "name=") }), "looked up by name: %v", reqs)
}

func TestDeleteNodesDeletesOnlyNamedServersOfTheGroup(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	_, err := p.CreateNodeGroup(ctx, spec(3), "k")
	require.NoError(t, err)
	stranger := srv.AddServer("stranger", "cx22", nil)
	all := names(srv.Servers())

	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{all[1], "stranger"}, "k-del"))
	assert.Equal(t, []string{all[0], all[2], stranger.Name}, names(srv.Servers()), "a server outside the group is never touched")

	// Already gone: success, and no second DELETE.
	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{all[1]}, "k-del"))
	assert.Equal(t, 1, fakehttp.CountPrefix(srv.Requests(), "DELETE "))

	// Already deleting: not asked again. Vanished between list and DELETE: success.
	srv.SetStatus(all[0], "deleting")
	srv.Fail(fakehttp.Fault{Method: http.MethodDelete, Status: 404}, "not_found", "server not found")
	require.NoError(t, p.DeleteNodes(ctx, groupID, []string{all[0], all[2]}, "k-del-2"))
	assert.Equal(t, 2, fakehttp.CountPrefix(srv.Requests(), "DELETE "))
}

func TestRateLimitedWithRetryAfter(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	srv.Fail(fakehttp.Fault{Method: http.MethodGet, Status: 429, Header: http.Header{"Retry-After": {"7"}}},
		"rate_limit_exceeded", "limit of 3600 requests per hour reached")

	_, err := p.NodeGroups(context.Background(), pool)
	require.Error(t, err)
	assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
	assert.Equal(t, 7*time.Second, errclass.RetryAfterOf(err))
}

func TestRateLimitedWithOnlyRateLimitHeaders(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	// 720 requests an hour refill one every 5 s; the bucket is full in an hour.
	srv.Fail(fakehttp.Fault{Method: http.MethodGet, Status: 429, Header: http.Header{
		"Ratelimit-Limit": {"720"}, "Ratelimit-Remaining": {"0"},
		"Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)},
	}}, "rate_limit_exceeded", "limit reached")

	_, err := p.NodeGroups(context.Background(), pool)
	assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
	assert.Equal(t, 5*time.Second, errclass.RetryAfterOf(err))
}

func TestErrorCodesAreClassified(t *testing.T) {
	for code, want := range map[string]errclass.Class{
		"locked":               errclass.Retryable,
		"conflict":             errclass.Retryable,
		"timeout":              errclass.Retryable,
		"server_error":         errclass.Retryable,
		"resource_unavailable": errclass.InsufficientCapacity,
		"placement_error":      errclass.InsufficientCapacity,
		"invalid_input":        errclass.Permanent,
		"forbidden":            errclass.Permanent,
		"not_found":            errclass.NotFound,
	} {
		t.Run(code, func(t *testing.T) {
			srv := newFake(t)
			p := newProvider(t, srv)
			srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 400}, code, "injected "+code)
			_, err := p.CreateNodeGroup(context.Background(), spec(1), "k")
			assert.Equal(t, want, errclass.Of(err), "%v", err)
			assert.Empty(t, srv.Servers())
		})
	}
	t.Run("bare 503", func(t *testing.T) {
		srv := newFake(t)
		p := newProvider(t, srv)
		srv.Inject(fakehttp.Fault{Status: 503})
		_, err := p.NodeGroups(context.Background(), pool)
		assert.Equal(t, errclass.Retryable, errclass.Of(err), "%v", err)
	})
}

// The API token's reference is the conformance suite's; the cluster-join
// reference is Hetzner's own.
func TestMissingClusterJoinIsPermanentAndNamesTheReference(t *testing.T) {
	srv := newFake(t)
	t.Setenv(tokenEnv, token)
	_, err := hetzner.New(context.Background(), hetzner.Config{
		CommonConfig: connectors.CommonConfig{Credentials: "env:" + tokenEnv},
		JoinConfig:   connectors.JoinConfig{ClusterJoin: "file:/nonexistent/join.yaml"},
		Location:     "fsn1",
		Image:        "ubuntu-24.04",
	}, nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "file:/nonexistent/join.yaml")
	assert.NotContains(t, err.Error(), token)
	assert.Empty(t, srv.Requests())
}

func TestNewNamesEveryMissingSetting(t *testing.T) {
	_, err := hetzner.New(context.Background(), hetzner.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:X"}, RetryMax: -1}, nil)
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err))
	for _, field := range []string{"location", "image", "retryMax"} {
		assert.Contains(t, err.Error(), field)
	}

	t.Setenv("VISOR_TEST_HCLOUD_CTL", "hcloud-first\x01rest")
	_, err = hetzner.New(context.Background(), hetzner.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_TEST_HCLOUD_CTL"}, Location: "fsn1", Image: "ubuntu-24.04"}, nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:VISOR_TEST_HCLOUD_CTL")
	assert.NotContains(t, err.Error(), "hcloud-first")
}

func TestBadInputIsRefusedBeforeCallingTheAPI(t *testing.T) {
	srv := newFake(t)
	p := connectors.Checked(newProvider(t, srv)) // as every worker builds it
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"group ID without type": func() error { return p.SetTargetSize(ctx, "acme.shop.api.hetzner", 2, "k") },
		"group ID bad type":     func() error { return p.SetTargetSize(ctx, "acme.shop.api.hetzner/CX 22", 2, "k") },
		"negative target":       func() error { return p.SetTargetSize(ctx, groupID, -1, "k") },
		"no key":                func() error { return p.SetTargetSize(ctx, groupID, 2, "") },
		"delete bad group":      func() error { return p.DeleteNodes(ctx, "nope", []string{"x"}, "k") },
		"delete empty name":     func() error { return p.DeleteNodes(ctx, groupID, []string{""}, "k") },
		"reserved label": func() error {
			s := spec(1)
			s.Labels = map[string]string{hetzner.LabelKey: "mine"}
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		},
		"invalid label value": func() error {
			s := spec(1)
			s.Labels = map[string]string{"team": "shop floor"}
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		},
		"bad pool": func() error {
			s := spec(1)
			s.Pool.Service = ""
			_, err := p.CreateNodeGroup(ctx, s, "k")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.Error(t, err)
			assert.True(t, errclass.IsPermanent(err), "%v", err)
		})
	}
	assert.Empty(t, srv.Requests())
}

func TestMissingSSHKeyIsPermanentAndCreatesNothing(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv, func(c *hetzner.Config) { c.SSHKeys = []string{"nobody"} })
	_, err := p.CreateNodeGroup(context.Background(), spec(1), "k")
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), `"nobody"`)
	assert.Empty(t, srv.Servers())
}

func TestCatalogIsTheBuiltInUnlessOverridden(t *testing.T) {
	srv := newFake(t)
	def, err := newProvider(t, srv).Catalog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, catalogs.Hetzner(), def)
	own := []types.InstanceType{{Name: "cax11", MilliCPU: 2000, Memory: 4 * types.GiB, MaxPods: 110}}
	got, err := newProvider(t, srv, func(c *hetzner.Config) { c.Catalog = own }).Catalog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, own, got)
}
