package digitalocean_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean/fakeapi"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	cluster  = "3b5e8f52-7d1e-4c1a-9d9e-0a1b2c3d4e5f"
	token    = "dop_v1_secret-token-value-7c1f"
	tokenEnv = "VISOR_TEST_DO_TOKEN"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "digitalocean", Cluster: "fra1"}

func newFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(token, cluster)
	t.Cleanup(srv.Close)
	return srv
}

func newProvider(t *testing.T, srv *fakeapi.Server, edit ...func(*digitalocean.Config)) *digitalocean.Provider {
	t.Helper()
	t.Setenv(tokenEnv, token)
	cfg := digitalocean.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:" + tokenEnv}, BaseURL: srv.URL, ClusterID: cluster}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := digitalocean.New(context.Background(), cfg, nil)
	require.NoError(t, err)
	return p
}

// seedPool adds a running pool labelled for pool with the given count.
func seedPool(srv *fakeapi.Server, name string, count int, labels map[string]string, tags ...string) godo.KubernetesNodePool {
	return srv.AddPool(cluster, godo.KubernetesNodePoolCreateRequest{
		Name: name, Size: "s-4vcpu-8gb", Count: count, Labels: labels, Tags: tags,
	})
}

func ourLabels() map[string]string { return map[string]string{types.LabelPool: pool.NodePoolLabel()} }

func TestNodeGroupsListsOnlyThisPoolsNodePools(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ours := seedPool(srv, "api-pool", 2, ourLabels())
	seedPool(srv, "other", 1, map[string]string{types.LabelPool: "acme.shop.web.digitalocean"})
	seedPool(srv, "unmanaged", 3, nil)

	groups, err := p.NodeGroups(context.Background(), pool)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	g := groups[0]
	assert.Equal(t, ours.ID, g.ID)
	assert.Equal(t, "api-pool", g.Name)
	assert.Equal(t, "s-4vcpu-8gb", g.Size)
	assert.Equal(t, 2, g.TargetSize)
	require.Len(t, g.Instances, 2)
	assert.Equal(t, ours.Nodes[0].Name, g.Instances[0].Name)
	assert.Equal(t, connectors.InstanceRunning, g.Instances[0].State)
}

func TestSetTargetSizeResizesWithAutoScaleOffAndKeepsLabelsAndTags(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	seeded := srv.AddPool(cluster, godo.KubernetesNodePoolCreateRequest{
		Name: "api-pool", Size: "s-4vcpu-8gb", Count: 2, Labels: ourLabels(), Tags: []string{"team-shop"},
		Taints:    []godo.Taint{{Key: "dedicated", Value: "api", Effect: "NoSchedule"}},
		AutoScale: true, MinNodes: 1, MaxNodes: 5,
	})

	require.NoError(t, p.SetTargetSize(context.Background(), seeded.ID, 4, "pool/acme/shop/api/digitalocean/fra1#7"))
	got := srv.Pools(cluster)[0]
	assert.Equal(t, 4, got.Count)
	assert.Len(t, got.Nodes, 4)
	assert.False(t, got.AutoScale, "DigitalOcean's autoscaler must be off on a pool Visor sizes")
	assert.Equal(t, "api-pool", got.Name)
	assert.Equal(t, ourLabels(), got.Labels)
	assert.Contains(t, got.Tags, "team-shop")
	assert.Equal(t, 1, fakehttp.CountPrefix(got.Tags, "k8s:worker"), "DigitalOcean's own tags are not sent back doubled")
	assert.Equal(t, seeded.Taints, got.Taints)

	// The same target again is a no-op: no second update.
	require.NoError(t, p.SetTargetSize(context.Background(), seeded.ID, 4, "pool/acme/shop/api/digitalocean/fra1#7"))
	assert.Equal(t, 1, fakehttp.CountPrefix(srv.Requests(), "PUT "))
}

func TestSetTargetSizeRefusesPoolsVisorDoesNotManage(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	foreign := seedPool(srv, "hand-made", 3, nil)

	err := p.SetTargetSize(context.Background(), foreign.ID, 1, "k")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), types.LabelPool)
	assert.Equal(t, 3, srv.Pools(cluster)[0].Count)
	assert.Zero(t, fakehttp.CountPrefix(srv.Requests(), "PUT "))
}

func TestSetTargetSizeOfMissingPoolIsNotFound(t *testing.T) {
	p := newProvider(t, newFake(t))
	err := p.SetTargetSize(context.Background(), "no-such-pool", 3, "k")
	assert.True(t, errclass.IsNotFound(err), "%v", err)
}

func spec() connectors.NodeGroupSpec {
	return connectors.NodeGroupSpec{Pool: pool, Size: "s-4vcpu-8gb", TargetSize: 2, Labels: map[string]string{"tier": "web"}}
}

// The create's labels and key tag; that a repeat with the key finds the
// pool is the conformance suite's.
func TestCreateNodeGroupLabelsAndTagsThePool(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	const key = connectors.IdempotencyKey("pool/acme/shop/api/digitalocean/fra1#12")

	g, err := p.CreateNodeGroup(ctx, spec(), key)
	require.NoError(t, err)
	pools := srv.Pools(cluster)
	require.Len(t, pools, 1)
	created := pools[0]
	assert.Equal(t, created.ID, g.ID)
	assert.Equal(t, 2, created.Count)
	assert.False(t, created.AutoScale)
	assert.Equal(t, pool.NodePoolLabel(), created.Labels[types.LabelPool])
	assert.Equal(t, "web", created.Labels["tier"])
	assert.Contains(t, created.Tags, digitalocean.KeyTag(key))
	assert.Equal(t, 2, g.TargetSize)
}

func TestKeyTagIsAValidDistinctTag(t *testing.T) {
	a := digitalocean.KeyTag("pool/acme/shop/api/digitalocean/fra1#1")
	b := digitalocean.KeyTag("pool/acme/shop/api/digitalocean/fra1#2")
	assert.NotEqual(t, a, b)
	for _, tag := range []string{a, b} {
		assert.True(t, strings.HasPrefix(tag, "visor-key-"))
		assert.Regexp(t, `^[a-zA-Z0-9:_-]{1,255}$`, tag)
	}
}

// A POST applied but answered 500 is success as soon as the list shows the
// pool, whether the call stops there or godo repeats the POST into a 422
// for the now-taken name.
func TestCreateAppliedButAnswered500IsSettledByTheList(t *testing.T) {
	for name, tc := range map[string]struct {
		retryMax    int
		uniqueNames bool
	}{
		"no client retry":                    {0, false},
		"godo repeats into a duplicate name": {2, true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFake(t)
			srv.UniquePoolNames = tc.uniqueNames
			p := newProvider(t, srv, func(c *digitalocean.Config) { c.RetryMax = tc.retryMax })
			srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 500, AfterApply: true}, "Server Error")

			g, err := p.CreateNodeGroup(context.Background(), spec(), "k-500")
			require.NoError(t, err)
			require.Len(t, srv.Pools(cluster), 1)
			assert.Equal(t, srv.Pools(cluster)[0].ID, g.ID)
		})
	}
}

func TestGodoRetriesRepeatingThePostStillLeaveOnePool(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv, func(c *digitalocean.Config) { c.RetryMax = 2 })
	const key = connectors.IdempotencyKey("pool/acme/shop/api/digitalocean/fra1#14")
	// First POST: pool created, answered 500. godo's retrying client sends
	// the same POST again, which creates a second pool.
	srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 500, AfterApply: true}, "Server Error")

	g, err := p.CreateNodeGroup(context.Background(), spec(), key)
	require.NoError(t, err)
	reqs := srv.Requests()
	assert.Equal(t, 2, fakehttp.CountPrefix(reqs, "POST "), "godo repeated the POST: %v", reqs)
	assert.Equal(t, 1, fakehttp.CountPrefix(reqs, "DELETE "), "the duplicate was deleted: %v", reqs)

	pools := srv.Pools(cluster)
	require.Len(t, pools, 1)
	assert.Equal(t, pools[0].ID, g.ID)
	assert.Contains(t, pools[0].Tags, digitalocean.KeyTag(key))
	assert.True(t, slices.ContainsFunc(reqs, func(r string) bool {
		return strings.HasPrefix(r, "DELETE ") && !strings.Contains(r, pools[0].ID)
	}), "the higher ID went, the lowest stayed")
}

func TestCreateRejectsBadSpecsBeforeCallingTheAPI(t *testing.T) {
	srv := newFake(t)
	p := connectors.Checked(newProvider(t, srv)) // as every worker builds it
	for name, tc := range map[string]struct {
		edit func(*connectors.NodeGroupSpec)
		key  connectors.IdempotencyKey
		want string
	}{
		"no size":       {func(s *connectors.NodeGroupSpec) { s.Size = "" }, "k", "spec.size"},
		"zero nodes":    {func(s *connectors.NodeGroupSpec) { s.TargetSize = 0 }, "k", "spec.targetSize"},
		"bad pool":      {func(s *connectors.NodeGroupSpec) { s.Pool.Org = "Acme" }, "k", "org"},
		"bad name":      {func(s *connectors.NodeGroupSpec) { s.Name = "Not_A_Label" }, "k", "spec.name"},
		"no key":        {func(*connectors.NodeGroupSpec) {}, "", "idempotency key"},
		"foreign label": {func(s *connectors.NodeGroupSpec) { s.Labels = map[string]string{types.LabelPool: "x"} }, "k", types.LabelPool},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec()
			tc.edit(&s)
			_, err := p.CreateNodeGroup(context.Background(), s, tc.key)
			require.Error(t, err)
			assert.True(t, errclass.IsPermanent(err), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Empty(t, srv.Requests())
}

func TestDeleteNodesWithoutReplacementLowersTheCount(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	ctx := context.Background()
	np := seedPool(srv, "api-pool", 3, ourLabels())
	victim := np.Nodes[1].Name

	require.NoError(t, p.DeleteNodes(ctx, np.ID, []string{victim}, "k-del"))
	got := srv.Pools(cluster)[0]
	assert.Equal(t, 2, got.Count, "deleting without replacement lowers the pool's count")
	assert.False(t, slices.ContainsFunc(got.Nodes, func(n *godo.KubernetesNode) bool { return n.Name == victim }))
	deletes := slices.DeleteFunc(srv.Requests(), func(r string) bool { return !strings.HasPrefix(r, "DELETE ") })
	require.Len(t, deletes, 1)
	assert.Contains(t, deletes[0], "/nodes/"+np.Nodes[1].ID)
	assert.Contains(t, deletes[0], "skip_drain=1")
	assert.NotContains(t, deletes[0], "replace=1")

	// Retried: the node is gone, which is success, and nothing is deleted twice.
	require.NoError(t, p.DeleteNodes(ctx, np.ID, []string{victim}, "k-del"))
	assert.Equal(t, 1, fakehttp.CountPrefix(srv.Requests(), "DELETE "))
	assert.Equal(t, 2, srv.Pools(cluster)[0].Count)
}

func TestDeleteNodesSkipsNodesAlreadyDeletingAndToleratesNotFound(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	np := seedPool(srv, "api-pool", 3, ourLabels())
	srv.SetNodeState(cluster, np.ID, np.Nodes[0].Name, "deleting")
	// The node vanishes between our read and our DELETE.
	srv.Fail(fakehttp.Fault{Method: http.MethodDelete, Status: 404}, "The resource you were accessing could not be found.")

	err := p.DeleteNodes(context.Background(), np.ID, []string{np.Nodes[0].Name, np.Nodes[2].Name}, "k")
	require.NoError(t, err)
	assert.Equal(t, 1, fakehttp.CountPrefix(srv.Requests(), "DELETE "), "only the node not already deleting was asked for")
}

func TestRateLimitedWithRetryAfter(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	srv.Fail(fakehttp.Fault{Method: http.MethodGet, Status: 429,
		Header: http.Header{"Retry-After": {"7"}}}, "Too many requests")

	_, err := p.NodeGroups(context.Background(), pool)
	require.Error(t, err)
	assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
	assert.Equal(t, 7*time.Second, errclass.RetryAfterOf(err))
}

func TestRateLimitedWithOnlyRateLimitReset(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	reset := time.Now().Add(30 * time.Second).Unix()
	srv.Fail(fakehttp.Fault{Method: http.MethodGet, Status: 429,
		Header: http.Header{"Ratelimit-Reset": {strconv.FormatInt(reset, 10)}}}, "Too many requests")

	_, err := p.NodeGroups(context.Background(), pool)
	assert.Equal(t, errclass.RateLimited, errclass.Of(err), "%v", err)
	assert.InDelta(t, 30, errclass.RetryAfterOf(err).Seconds(), 1.5)
}

func TestServerErrorsAreRetryable(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	srv.Fail(fakehttp.Fault{Status: 503}, "Service Unavailable")
	_, err := p.NodeGroups(context.Background(), pool)
	assert.Equal(t, errclass.Retryable, errclass.Of(err), "%v", err)
}

func TestNewRejectsMissingClusterIDAndUnusableTokens(t *testing.T) {
	t.Setenv(tokenEnv, token)
	_, err := digitalocean.New(context.Background(), digitalocean.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:" + tokenEnv}}, nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "clusterID")

	// A token file holding more than the token (say, a whole config).
	t.Setenv("VISOR_TEST_DO_TWO_LINES", "dop_v1_first-line\nsecond-line")
	_, err = digitalocean.New(context.Background(), digitalocean.Config{CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_TEST_DO_TWO_LINES"}, ClusterID: cluster}, nil)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "env:VISOR_TEST_DO_TWO_LINES")
	assert.NotContains(t, err.Error(), "first-line")
}

func TestCatalogIsTheBuiltInUnlessOverridden(t *testing.T) {
	srv := newFake(t)
	def, err := newProvider(t, srv).Catalog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, catalogs.DigitalOcean(), def)
	own := []types.InstanceType{{Name: "s-1vcpu-2gb", MilliCPU: 1000, Memory: 2 * types.GiB, MaxPods: 110, HourlyPrice: 0.018}}
	got, err := newProvider(t, srv, func(c *digitalocean.Config) { c.Catalog = own }).Catalog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, own, got)
}
