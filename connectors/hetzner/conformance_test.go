package hetzner_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/connectors/hetzner/fakeapi"
)

// The connector against fakeapi, which refuses any token but its own.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv := newFake(t)
		return conformance.Double{
			Provider:   newProvider(t, srv),
			Spec:       spec(0),
			Credential: "env:" + tokenEnv,
			Secret:     token,
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				return hetzner.New(ctx, hetzner.Config{CommonConfig: connectors.CommonConfig{Credentials: ref}, BaseURL: srv.URL1(), Location: "fsn1", Image: "ubuntu-24.04"}, nil)
			},
			WrongSecret: "hcloud-wrong-secret-31337",
			Machines:    func(*testing.T) int { return liveServers(srv) },
			LoseAnswer: func(*testing.T) {
				srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 500, AfterApply: true}, "server_error", "internal error")
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 403}, "resource_limit_exceeded", "server limit reached")
				case conformance.Capacity:
					srv.UnavailableTypes = []string{spec(0).Size}
				case conformance.Auth:
					srv.Fail(fakehttp.Fault{Status: 401, Times: 100}, "unauthorized", "unable to authenticate")
				}
				return ""
			},
		}
	})
}

// liveServers counts the servers, not being deleted, labelled for the pool.
func liveServers(srv *fakeapi.Server) int {
	n := 0
	for _, s := range srv.Servers() {
		if s.Labels[hetzner.LabelPool] == pool.NodePoolLabel() && s.Status != "deleting" {
			n++
		}
	}
	return n
}
