package hetzner_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/exp/mockutil"
	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
)

// A uniqueness_error whose server does not carry our key is someone
// else's: the create fails for good and nothing is adopted. Scripted with
// hcloud-go's mockutil, which checks the exact sequence of calls.
func TestNameTakenByAServerWeDidNotCreateIsPermanent(t *testing.T) {
	var taken string
	emptyList := schema.ServerListResponse{Servers: []schema.Server{}}
	srv := mockutil.NewServer(t, []mockutil.Request{
		{Method: http.MethodGet, Status: http.StatusOK, JSON: emptyList, Want: func(t *testing.T, r *http.Request) {
			assert.Equal(t, "visor-pool=acme.shop.api.hetzner,visor-size=cx22", r.URL.Query().Get("label_selector"))
		}},
		{Method: http.MethodPost, Status: http.StatusConflict,
			JSONRaw: `{"error":{"code":"uniqueness_error","message":"server name is already used","details":null}}`,
			Want: func(t *testing.T, r *http.Request) {
				body, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				_, rest, _ := strings.Cut(string(body), `"name":"`)
				taken, _, _ = strings.Cut(rest, `"`)
			}},
		{Method: http.MethodGet, Status: http.StatusOK, Want: func(t *testing.T, r *http.Request) {
			assert.Equal(t, taken, r.URL.Query().Get("name"))
		}, JSONRaw: `{"servers":[{"id":77,"name":"NAME","status":"running","labels":{"visor-pool":"acme.shop.api.hetzner"}}],"meta":{"pagination":{"page":1,"per_page":25,"next_page":null,"last_page":1,"total_entries":1}}}`},
	})
	t.Setenv(tokenEnv, token)
	p, err := hetzner.New(context.Background(), hetzner.Config{
		CommonConfig: connectors.CommonConfig{Credentials: "env:" + tokenEnv},
		BaseURL:      srv.URL,
		Location:     "fsn1",
		Image:        "ubuntu-24.04",
	}, nil)
	require.NoError(t, err)

	_, err = p.CreateNodeGroup(context.Background(), spec(1), "k-foreign")
	require.Error(t, err)
	assert.True(t, errclass.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "did not create")
	assert.NotEmpty(t, taken)
}
