package starter

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

func testCredential(t *testing.T) (auth.Trust, auth.Credential) {
	issuer, err := auth.GenerateIssuer("dev")
	require.NoError(t, err)
	cred, err := auth.NewCredential(issuer, "alice@acme", []string{"acme"}, time.Hour, time.Now())
	require.NoError(t, err)
	return auth.Trust{Issuers: map[string]string{"dev": issuer.Public()}}, cred
}

func TestAuthorizeSignsWhatIsSent(t *testing.T) {
	trust, cred := testCredential(t)
	c := WithCredential(&fakeClient{}, cred)
	defer Forget(c)
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "sim-east"}

	req := contract.ScaleRequest{Target: 4, Reason: "launch"}
	var err error
	req.Auth, err = authorize(c, key.WorkflowID(), contract.UpdateScale, &req, &req.RequestedBy)
	require.NoError(t, err)
	require.Equal(t, "alice@acme", req.RequestedBy, "an empty requestedBy shows the subject")
	wire, err := json.Marshal(req) // what the SDK's JSON converter sends
	require.NoError(t, err)
	caller, err := auth.Verify(trust, *req.Auth, key.WorkflowID(), contract.UpdateScale, wire, time.Now())
	require.NoError(t, err)
	require.True(t, caller.MayActFor("acme"))

	// Unsigned without a credential: the workflow decides.
	a, err := authorize(&fakeClient{}, key.WorkflowID(), contract.UpdateScale, &req, nil)
	require.NoError(t, err)
	require.Nil(t, a)
}

func TestClientOptionsCredentialAndCodec(t *testing.T) {
	_, cred := testCredential(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "cred.json")
	require.NoError(t, auth.SaveCredential(path, cred))
	opts, err := ConnectOptions{Credential: "file:" + path}.FromEnv().ClientOptions()
	require.NoError(t, err)
	require.IsType(t, &auth.BearerHeaders{}, opts.HeadersProvider)

	_, err = ConnectOptions{Credential: "file:" + filepath.Join(dir, "missing.json")}.ClientOptions()
	require.ErrorContains(t, err, "credential: ")
	_, err = ConnectOptions{Credential: "file:" + path, APIKey: "k"}.ClientOptions()
	require.ErrorContains(t, err, "pick one")
	_, err = ConnectOptions{CodecKeys: "env:VISOR_TEST_NO_SUCH_KEYS"}.ClientOptions()
	require.ErrorContains(t, err, "codec keys")
}

// fakeClient stands for a dialled client; only its identity matters here.
type fakeClient struct{ client.Client }
