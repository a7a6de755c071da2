package fakeapi

import (
	"context"
	"fmt"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fake's documented behaviours, checked through hcloud-go itself.
func TestFakeFollowsTheDocumentedServersAPI(t *testing.T) {
	srv := New("tok")
	defer srv.Close()
	client := hcloud.NewClient(hcloud.WithToken("tok"), hcloud.WithEndpoint(srv.URL1()), hcloud.WithRetryOpts(hcloud.RetryOpts{MaxRetries: 0}))
	ctx := context.Background()

	for i := range 60 {
		labels := map[string]string{"pool": "a"}
		if i%2 == 1 {
			labels = map[string]string{"pool": "b"}
		}
		res, _, err := client.Server.Create(ctx, hcloud.ServerCreateOpts{
			Name: fmt.Sprintf("s%d", i), ServerType: &hcloud.ServerType{Name: "cx22"},
			Image: &hcloud.Image{Name: "ubuntu-24.04"}, Location: &hcloud.Location{Name: "fsn1"}, Labels: labels,
		})
		require.NoError(t, err)
		assert.Equal(t, "create_server", res.Action.Command)
		assert.Equal(t, hcloud.ServerStatusInitializing, res.Server.Status)
	}
	// Paginated (50 a page at most) and filtered by label.
	all, err := client.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "pool=a"}})
	require.NoError(t, err)
	assert.Len(t, all, 30)
	none, err := client.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "pool=a,!pool"}})
	require.NoError(t, err)
	assert.Empty(t, none)
	every, err := client.Server.All(ctx)
	require.NoError(t, err)
	assert.Len(t, every, 60)

	// A taken name is a uniqueness_error.
	_, _, err = client.Server.Create(ctx, hcloud.ServerCreateOpts{
		Name: "s0", ServerType: &hcloud.ServerType{Name: "cx22"}, Image: &hcloud.Image{Name: "ubuntu-24.04"},
	})
	assert.True(t, hcloud.IsError(err, hcloud.ErrorCodeUniquenessError), "%v", err)

	// Delete answers an action; a second delete is not_found.
	res, _, err := client.Server.DeleteWithResult(ctx, all[0])
	require.NoError(t, err)
	assert.Equal(t, "delete_server", res.Action.Command)
	_, _, err = client.Server.DeleteWithResult(ctx, all[0])
	assert.True(t, hcloud.IsError(err, hcloud.ErrorCodeNotFound), "%v", err)

	// A wrong token is unauthorized.
	bad := hcloud.NewClient(hcloud.WithToken("nope"), hcloud.WithEndpoint(srv.URL1()))
	_, _, err = bad.Server.List(ctx, hcloud.ServerListOpts{})
	assert.True(t, hcloud.IsError(err, hcloud.ErrorCodeUnauthorized), "%v", err)
}
