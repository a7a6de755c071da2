package fakeapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/digitalocean/godo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fake's documented behaviours, checked through godo itself.
func TestFakeFollowsTheDocumentedNodePoolAPI(t *testing.T) {
	srv := New("tok", "c1")
	defer srv.Close()
	client, err := godo.New(http.DefaultClient, godo.SetBaseURL(srv.URL),
		godo.SetRequestHeaders(map[string]string{"Authorization": "Bearer tok"}))
	require.NoError(t, err)
	ctx := context.Background()

	np, _, err := client.Kubernetes.CreateNodePool(ctx, "c1", &godo.KubernetesNodePoolCreateRequest{Name: "p", Size: "s-1vcpu-2gb", Count: 2})
	require.NoError(t, err)
	assert.Contains(t, np.Tags, "k8s:c1")

	// Replacing a node keeps the count; deleting without replacement lowers it.
	_, err = client.Kubernetes.DeleteNode(ctx, "c1", np.ID, np.Nodes[0].ID, &godo.KubernetesNodeDeleteRequest{Replace: true})
	require.NoError(t, err)
	got, _, err := client.Kubernetes.GetNodePool(ctx, "c1", np.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Count)
	assert.Len(t, got.Nodes, 2)
	_, err = client.Kubernetes.DeleteNode(ctx, "c1", np.ID, got.Nodes[0].ID, nil)
	require.NoError(t, err)
	got, _, _ = client.Kubernetes.GetNodePool(ctx, "c1", np.ID)
	assert.Equal(t, 1, got.Count)

	// Update needs name and count.
	_, resp, err := client.Kubernetes.UpdateNodePool(ctx, "c1", np.ID, &godo.KubernetesNodePoolUpdateRequest{Count: new(3)})
	require.Error(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)

	// A wrong token is refused.
	bad, _ := godo.New(http.DefaultClient, godo.SetBaseURL(srv.URL))
	_, resp, err = bad.Kubernetes.ListNodePools(ctx, "c1", nil)
	require.Error(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
