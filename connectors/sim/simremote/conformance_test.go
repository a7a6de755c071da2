package simremote

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/sim"
)

// The client against a sim host serving one real sim, with a host that
// can apply the next create and answer 503 instead of its reply, as a
// host restarting behind a proxy does. The sim behind it takes no
// credential and keeps no quota the suite's groups reach.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		f, err := sim.New(sim.Config{Cluster: "lab", Provider: "sim"})
		require.NoError(t, err)
		var lose atomic.Bool
		host := Handler(map[string]connectors.Cluster{"lab": {ID: "lab", Provider: connectors.Checked(f)}})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/"+connectors.OpCreateNodeGroup) && lose.CompareAndSwap(true, false) {
				host.ServeHTTP(httptest.NewRecorder(), r)
				http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
				return
			}
			host.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c, err := New(srv.URL, "lab", "sim")
		require.NoError(t, err)
		size := catalogs.Sim()[0].Name
		return conformance.Double{
			Provider: c,
			Spec:     connectors.NodeGroupSpec{Pool: pool, Size: size},
			Machines: func(*testing.T) int {
				n := 0
				for _, g := range f.Inventory().Groups {
					if g.Pool == pool {
						for _, in := range g.Group.Instances {
							if in.State != connectors.InstanceDeleting {
								n++
							}
						}
					}
				}
				return n
			},
			LoseAnswer: func(*testing.T) { lose.Store(true) },
			Refuse: func(t *testing.T, fail conformance.Failure) string {
				switch fail {
				case conformance.Quota:
					return "the sim's one quota is a group's target cap, far above the suite's groups"
				case conformance.Auth:
					return "the sim host takes no credential"
				}
				require.NoError(t, f.SetFaults(sim.FaultConfig{InsufficientCapacitySizes: []string{size}}))
				return ""
			},
		}
	})
}
