package digitalocean_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean/fakeapi"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/types"
)

// The connector against fakeapi, which refuses any token but its own.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv := newFake(t)
		return conformance.Double{
			Provider:   newProvider(t, srv),
			Spec:       spec(),
			Credential: "env:" + tokenEnv,
			Secret:     token,
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				return digitalocean.New(ctx, digitalocean.Config{CommonConfig: connectors.CommonConfig{Credentials: ref}, BaseURL: srv.URL, ClusterID: cluster}, nil)
			},
			WrongSecret: "dop_v1_wrong-secret-4242",
			Machines:    func(*testing.T) int { return liveNodes(srv) },
			LoseAnswer: func(*testing.T) {
				srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 500, AfterApply: true}, "Server Error")
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					srv.Fail(fakehttp.Fault{Method: http.MethodPost, Status: 422},
						"creating this/these droplet(s) will exceed your droplet limit")
				case conformance.Capacity:
					srv.UnavailableSizes = []string{spec().Size}
				case conformance.Auth:
					srv.Fail(fakehttp.Fault{Status: 401, Times: 100}, "Unable to authenticate you")
				}
				return ""
			},
		}
	})
}

// liveNodes counts the nodes, not being deleted, of the pool's node pools.
func liveNodes(srv *fakeapi.Server) int {
	n := 0
	for _, np := range srv.Pools(cluster) {
		if np.Labels[types.LabelPool] != pool.NodePoolLabel() {
			continue
		}
		for _, node := range np.Nodes {
			if node.Status == nil || node.Status.State != "deleting" {
				n++
			}
		}
	}
	return n
}
