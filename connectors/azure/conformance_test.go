package azure_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/azure"
	"github.com/hanzoai/visor-fleet/connectors/azure/fakearm"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	tenant    = "8f0c1a4e-tenant"
	client    = "5b7d2c19-client"
	secret    = "azure-client-secret~7Qx.2"
	credEnv   = "VISOR_TEST_AZURE_CREDENTIAL"
	principal = tenant + ":" + client + ":" + secret
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "azure", Cluster: "weu-1"}

func config(ref connectors.CredentialRef) azure.Config {
	return azure.Config{
		CommonConfig:   connectors.CommonConfig{Credentials: ref},
		SubscriptionID: "00000000-0000-0000-0000-000000000000",
		ResourceGroup:  "visor",
		Location:       "westeurope",
		SubnetID:       "/subscriptions/0/resourceGroups/visor/providers/Microsoft.Network/virtualNetworks/k8s/subnets/nodes",
		Image:          "Canonical:ubuntu-24_04-lts:server:latest",
		SSHPublicKey:   "ssh-ed25519 AAAA test",
		AuthorityHost:  fakearm.AuthorityHost,
	}
}

func newProvider(t *testing.T, srv *fakearm.Server, ref connectors.CredentialRef) (*azure.Provider, error) {
	t.Helper()
	return azure.NewWith(context.Background(), config(ref), nil, azure.Options{Transport: srv, PollFrequency: 10 * time.Millisecond})
}

// The connector against fakearm: the armcompute SDK's fake server behind
// the real clients and pollers, and a token endpoint the real azidentity
// credential logs in to.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv := fakearm.New(tenant, client, secret)
		t.Setenv(credEnv, principal)
		p, err := newProvider(t, srv, "env:"+credEnv)
		require.NoError(t, err)
		return conformance.Double{
			Provider:   p,
			Spec:       connectors.NodeGroupSpec{Pool: pool, Size: "Standard_D2s_v5", Labels: map[string]string{"team": "shop"}},
			Credential: "env:" + credEnv,
			Secret:     secret,
			Rebuild: func(_ context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				return newProvider(t, srv, ref)
			},
			WrongSecret: tenant + ":" + client + ":not-the-secret",
			Machines:    func(*testing.T) int { return srv.Machines(azure.TagPool, pool.NodePoolLabel()) },
			LoseAnswer: func(*testing.T) {
				srv.Inject(fakearm.Fault{Op: fakearm.OpCreateOrUpdate, Status: http.StatusInternalServerError, Code: "InternalServerError", AfterApply: true})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					srv.Inject(fakearm.Fault{Op: fakearm.OpCreateOrUpdate, Status: http.StatusConflict, Code: "OperationNotAllowed"})
				case conformance.Capacity:
					srv.UnavailableSizes = []string{"Standard_D2s_v5"}
				case conformance.Auth:
					srv.Revoke()
				}
				return ""
			},
		}
	})
}
