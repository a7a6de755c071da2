package proxmox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
	"github.com/hanzoai/visor-fleet/connectors/proxmox"
	"github.com/hanzoai/visor-fleet/connectors/proxmox/fakeapi"
)

// The connector against fakeapi, a two-node cluster that refuses any API
// token but its own; every task is still running when first polled.
func TestConformance(t *testing.T) {
	_, secret, _ := strings.Cut(token, "=")
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv := newFake(t)
		srv.SetTaskPolls(3)
		return conformance.Double{
			Provider:   newProvider(t, srv),
			Spec:       spec(0),
			Credential: "env:" + tokenEnv,
			Secret:     secret,
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				cfg := config(srv)
				cfg.Credentials = ref
				return proxmox.New(ctx, cfg, nil)
			},
			WrongSecret: "visor@pve!fleet=wrong-secret-31337",
			Machines:    func(*testing.T) int { return liveVMs(srv) },
			LoseAnswer: func(*testing.T) {
				srv.Inject(fakehttp.Fault{Method: http.MethodPost, Path: "/api2/json/nodes/pve1/qemu/9000/clone", AfterApply: true, Status: http.StatusServiceUnavailable})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					return "Proxmox VE has no account quota: a cluster refuses a clone only for want of room on its node (capacity)"
				case conformance.Capacity:
					srv.FailNextTask("qmclone", "clone failed: not enough memory on node pve1")
				case conformance.Auth:
					srv.Inject(fakehttp.Fault{Times: 100, Status: http.StatusUnauthorized})
				}
				return ""
			},
		}
	})
}

// liveVMs counts the cluster's VMs not being destroyed: the fake holds no
// pool but the one under test.
func liveVMs(srv *fakeapi.Server) int {
	n := 0
	for _, v := range srv.VMs() {
		if v.Lock != "destroyed" {
			n++
		}
	}
	return n
}
