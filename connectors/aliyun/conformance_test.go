package aliyun_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/aliyun"
	"github.com/hanzoai/visor-fleet/connectors/aliyun/fakeapi"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// The connector against fakeapi, which refuses any AccessKey ID but its own.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		srv := newFake(t)
		runInstances := func(r *http.Request) bool { return r.Header.Get("x-acs-action") == "RunInstances" }
		return conformance.Double{
			Provider:   newProvider(t, srv),
			Spec:       connectors.NodeGroupSpec{Pool: pool, Size: "ecs.g7.large"},
			Credential: "env:" + keyEnv,
			Secret:     accessSecret,
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				cfg := config(srv)
				cfg.Credentials = ref
				return aliyun.New(ctx, cfg, nil)
			},
			WrongSecret: "LTAIwrongAccessKeyID:wrong-secret-31337",
			Machines:    func(*testing.T) int { return poolInstances(srv) },
			LoseAnswer: func(*testing.T) {
				srv.Inject(fakehttp.Fault{Match: runInstances, AfterApply: true, Status: http.StatusServiceUnavailable,
					Body: []byte(`{"RequestId":"x","Code":"ServiceUnavailable","Message":"The request has failed due to a temporary failure of the server."}`)})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					srv.SetQuota(1)
				case conformance.Capacity:
					srv.SetNoStock("ecs.g7.large")
				case conformance.Auth:
					srv.Inject(fakehttp.Fault{Times: 100, Status: http.StatusNotFound,
						Body: []byte(`{"RequestId":"x","Code":"InvalidAccessKeyId.NotFound","Message":"Specified access key is not found."}`)})
				}
				return ""
			},
		}
	})
}

// poolInstances counts the region's instances tagged for the pool (ECS
// releases deleted instances at once).
func poolInstances(srv *fakeapi.Server) int {
	n := 0
	for _, in := range srv.Instances() {
		if in.Tags[aliyun.TagPool] == pool.NodePoolLabel() {
			n++
		}
	}
	return n
}
