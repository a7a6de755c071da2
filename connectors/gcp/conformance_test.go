package gcp_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/gcp"
	"github.com/hanzoai/visor-fleet/connectors/gcp/fakecompute"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	email   = "visor-fleet@visor-test.iam.gserviceaccount.com"
	project = "visor-test"
	zone    = "us-central1-a"
	keyEnv  = "VISOR_TEST_GCP_KEY"
)

var pool = types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "gcp", Cluster: "usc1"}

// keys are the service account's key pair and another the fake refuses,
// made once: RSA key generation is slow on a shared machine.
var keys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var out [2]*rsa.PrivateKey
	for i := range out {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
})

// secretOf is a piece of the private key's PEM body that would show if
// the key, or the key file, were ever printed.
func secretOf(k *rsa.PrivateKey) string {
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return base64.StdEncoding.EncodeToString(der)[200:264]
}

func newFake(t *testing.T) *fakecompute.Server {
	t.Helper()
	srv := fakecompute.New(email, &keys()[0].PublicKey)
	t.Cleanup(srv.Close)
	return srv
}

func config(srv *fakecompute.Server, ref connectors.CredentialRef) gcp.Config {
	return gcp.Config{
		CommonConfig: connectors.CommonConfig{Credentials: ref},
		Project:      project,
		Zone:         zone,
		Endpoint:     srv.Endpoint(),
		Image:        "projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64",
	}
}

var testOptions = gcp.Options{PollInterval: 5 * time.Millisecond, AttemptWait: 2 * time.Second}

func newProvider(t *testing.T, srv *fakecompute.Server, ref connectors.CredentialRef) (*gcp.Provider, error) {
	t.Helper()
	return gcp.NewWith(context.Background(), config(srv, ref), nil, testOptions)
}

// started is a fake and a provider logged in with the right key.
func started(t *testing.T) (*fakecompute.Server, *gcp.Provider) {
	t.Helper()
	srv := newFake(t)
	t.Setenv(keyEnv, string(fakecompute.KeyFile(email, srv.TokenURL(), keys()[0])))
	p, err := newProvider(t, srv, "env:"+keyEnv)
	require.NoError(t, err)
	return srv, p
}

// The connector against fakecompute: the real compute/v1 client, its
// service-account login against the fake's token endpoint, operations
// that finish a few requests later.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv, p := started(t)
		return conformance.Double{
			Provider:   p,
			Spec:       connectors.NodeGroupSpec{Pool: pool, Size: "e2-standard-2", Labels: map[string]string{"team": "shop"}},
			Credential: "env:" + keyEnv,
			Secret:     secretOf(keys()[0]),
			Rebuild: func(_ context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				return newProvider(t, srv, ref)
			},
			WrongSecret: string(fakecompute.KeyFile(email, srv.TokenURL(), keys()[1])),
			Machines:    func(*testing.T) int { return srv.Machines(gcp.GroupPrefix(pool.NodePoolLabel())) },
			LoseAnswer: func(*testing.T) {
				srv.Inject(fakehttp.Fault{Method: http.MethodPost, Path: "/compute/v1/projects/" + project + "/zones/" + zone + "/instanceGroupManagers",
					AfterApply: true, Status: http.StatusServiceUnavailable, Body: backendError})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					srv.SetQuota(0)
				case conformance.Capacity:
					srv.SetUnavailable("e2-standard-2", true)
				case conformance.Auth:
					srv.Revoke()
				}
				return ""
			},
		}
	})
}

var backendError = []byte(`{"error":{"code":503,"message":"Internal error. Please try again or contact Google Support.","errors":[{"message":"Internal error.","domain":"global","reason":"backendError"}]}}`)
