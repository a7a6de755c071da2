package lightsail_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/lightsail"
	"github.com/hanzoai/visor-fleet/connectors/lightsail/fakelightsail"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	region    = "us-east-1"
	accessKey = "AKIAFAKELIGHTSAIL01"
	secretKey = "lightsail-secret/9fQ+x2Lr7"
	keyEnv    = "VISOR_TEST_LIGHTSAIL_KEY"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "lightsail", Cluster: "use1"}

func newFake(t *testing.T) *fakelightsail.Server {
	t.Helper()
	srv := fakelightsail.New(region, accessKey, secretKey)
	t.Cleanup(srv.Close)
	return srv
}

func config(srv *fakelightsail.Server, ref connectors.CredentialRef) lightsail.Config {
	return lightsail.Config{CommonConfig: connectors.CommonConfig{Credentials: ref}, Region: region, AvailabilityZone: "us-east-1a", BlueprintID: "ubuntu_24_04", Endpoint: srv.URL}
}

func started(t *testing.T) (*fakelightsail.Server, *lightsail.Provider) {
	t.Helper()
	srv := newFake(t)
	t.Setenv(keyEnv, accessKey+":"+secretKey)
	p, err := lightsail.New(context.Background(), config(srv, "env:"+keyEnv), nil)
	require.NoError(t, err)
	return srv, p
}

// The connector against fakelightsail, which checks every request's
// SigV4 signature: the real Lightsail client signs and sends them.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv, p := started(t)
		return conformance.Double{
			Provider:   p,
			Spec:       connectors.NodeGroupSpec{Pool: pool, Size: "medium_3_0", Labels: map[string]string{"team": "shop"}},
			Credential: "env:" + keyEnv,
			Secret:     secretKey,
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				return lightsail.New(ctx, config(srv, ref), nil)
			},
			WrongSecret: accessKey + ":not-the-secret",
			Machines:    func(*testing.T) int { return srv.Machines(lightsail.TagPool, pool.NodePoolLabel()) },
			LoseAnswer: func(*testing.T) {
				srv.Inject(fakehttp.Fault{Match: fakelightsail.Action("CreateInstances"), AfterApply: true, Status: http.StatusInternalServerError,
					Body: []byte(`{"__type":"ServiceException","message":"An internal error occurred."}`)})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					srv.SetQuota(0)
				case conformance.Capacity:
					srv.SetUnavailable("medium_3_0", true)
				case conformance.Auth:
					srv.Revoke()
				}
				return ""
			},
		}
	})
}
