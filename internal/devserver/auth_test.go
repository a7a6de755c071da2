package devserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	commonpb "go.temporal.io/api/common/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/starter"
)

// The frontend refuses a caller without a Visor bearer token, or with one
// from an untrusted issuer, and serves one with a valid token; the codec
// server decodes what the codec encrypted; data files are private.
func TestFrontendRequiresBearerToken(t *testing.T) {
	now := time.Now()
	issuer, err := auth.GenerateIssuer("dev")
	must(t, err)
	trust := auth.Trust{Issuers: map[string]string{"dev": issuer.Public()}}
	admin, err := auth.NewCredential(issuer, "dev-admin", []string{auth.AllOrgs}, time.Hour, now)
	must(t, err)
	ui, err := auth.NewCredential(issuer, UISubject, []string{auth.ReadOnly}, time.Hour, now)
	must(t, err)
	tenant, err := auth.NewCredential(issuer, "alice@acme", []string{"acme"}, time.Hour, now)
	must(t, err)
	rogue, err := auth.GenerateIssuer("dev")
	must(t, err)
	forged, err := auth.NewCredential(rogue, "mallory", []string{auth.AllOrgs}, time.Hour, now)
	must(t, err)
	key, err := codec.GenerateKey("k1")
	must(t, err)
	pc, err := codec.NewPayloadCodec(codec.Keys{key})
	must(t, err)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := Start(ctx, Options{
		DataDir: dir, GRPCPort: freeTestPort(t), UIPort: freeTestPort(t), CodecPort: freeTestPort(t),
		LogLevel: "error", LogFile: filepath.Join(dir, "temporal.log"),
		Trust: &trust, Credential: &admin, UICredential: &ui, Codec: pc,
		SearchAttributes: starter.SearchAttributeTypes(),
	})
	must(t, err)
	defer srv.Stop()

	describe := func(cred *auth.Credential) error {
		o := client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quietLogger{}}
		if cred != nil {
			o.HeadersProvider = auth.NewBearerHeaders(*cred)
		}
		c, err := client.Dial(o)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: srv.Namespace()})
		return err
	}
	var denied *serviceerror.PermissionDenied
	if err := describe(nil); !errors.As(err, &denied) {
		t.Fatalf("no token: err = %v, want PermissionDenied", err)
	}
	if err := describe(&forged); !errors.As(err, &denied) {
		t.Fatalf("token from a forged issuer key: err = %v, want PermissionDenied", err)
	}
	if err := describe(&admin); err != nil {
		t.Fatalf("admin token: %v", err)
	}
	if err := describe(&tenant); err != nil {
		t.Fatalf("tenant token on its namespace: %v", err)
	}

	// A tenant moves only its own org's pools: calls no workflow code
	// sees (terminate, reset, a start under another org's ID, a signal to
	// a cluster) are refused by the frontend itself.
	tenantClient, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quietLogger{}, HeadersProvider: auth.NewBearerHeaders(tenant)})
	must(t, err)
	defer tenantClient.Close()
	if err := tenantClient.TerminateWorkflow(ctx, "pool/globex/ml/infer/sim/sim-east", "", "hostile"); !errors.As(err, &denied) {
		t.Fatalf("tenant terminating another org's pool: err = %v, want PermissionDenied", err)
	}
	if err := tenantClient.TerminateWorkflow(ctx, "pool/acme/shop/api/sim/sim-east", "", "own pool"); !errors.As(err, &denied) {
		t.Fatalf("tenant terminating its own pool (its nodes would be abandoned): err = %v, want PermissionDenied", err)
	}
	if _, err := tenantClient.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "pool/globex/ml/infer/sim/sim-east", TaskQueue: "visor-fleet"}, "PoolWorkflow"); !errors.As(err, &denied) {
		t.Fatalf("tenant starting another org's pool: err = %v, want PermissionDenied", err)
	}
	if err := tenantClient.SignalWorkflow(ctx, "cluster/sim-east", "", "pool-registered", nil); !errors.As(err, &denied) {
		t.Fatalf("tenant signalling a cluster: err = %v, want PermissionDenied", err)
	}
	// A tenant's worker polls only its own tenant-<org> queue, never the
	// platform's (it could answer other pools' activities with lies).
	poll := func(queue string, wait time.Duration) error {
		pctx, stop := context.WithTimeout(ctx, wait)
		defer stop()
		_, err := tenantClient.WorkflowService().PollActivityTaskQueue(pctx, &workflowservice.PollActivityTaskQueueRequest{
			Namespace: srv.Namespace(), TaskQueue: &taskqueuepb.TaskQueue{Name: queue}, Identity: "tenant-worker"})
		return err
	}
	if err := poll("visor-fleet", 10*time.Second); !errors.As(err, &denied) {
		t.Fatalf("tenant polling the platform's queue: err = %v, want PermissionDenied", err)
	}
	if err := poll("tenant-acme", time.Second); errors.As(err, &denied) {
		t.Fatalf("tenant polling its own queue was refused: %v", err)
	}
	// A tenant lists and counts only its own orgs' pools (and clusters):
	// the whole namespace would show every org's pool IDs and attributes.
	list := func(query string) error {
		_, err := tenantClient.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: srv.Namespace(), Query: query})
		return err
	}
	if err := list(""); !errors.As(err, &denied) || !strings.Contains(denied.Reason, "VisorOrg = 'acme' AND") {
		t.Fatalf("tenant listing the whole namespace: err = %v, want PermissionDenied saying how to scope it", err)
	}
	if err := list("VisorOrg = 'globex'"); !errors.As(err, &denied) {
		t.Fatalf("tenant listing another org's pools: err = %v, want PermissionDenied", err)
	}
	if err := list("VisorOrg = 'acme' AND ExecutionStatus = 'Running'"); err != nil {
		t.Fatalf("tenant listing its own pools: %v", err)
	}
	if _, err := tenantClient.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: srv.Namespace(), Query: "ExecutionStatus = 'Running'"}); !errors.As(err, &denied) {
		t.Fatalf("tenant counting the whole namespace: err = %v, want PermissionDenied", err)
	}
	if _, err := starter.ListPools(ctx, starter.WithCredential(tenantClient, tenant), srv.Namespace(), starter.PoolFilter{}); err != nil {
		t.Fatalf("visor pool list with a tenant credential (scoped to its orgs by itself): %v", err)
	}
	if _, err := starter.ListClusters(ctx, tenantClient, false); err != nil {
		t.Fatalf("tenant listing clusters: %v", err)
	}
	var notFound *serviceerror.NotFound
	if _, err := tenantClient.DescribeWorkflowExecution(ctx, "pool/acme/shop/api/sim/sim-east", ""); !errors.As(err, &notFound) {
		t.Fatalf("tenant describing its own pool: err = %v, want NotFound (allowed, not there)", err)
	}
	adminClient, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quietLogger{}, HeadersProvider: auth.NewBearerHeaders(admin)})
	must(t, err)
	defer adminClient.Close()
	if err := adminClient.TerminateWorkflow(ctx, "pool/globex/ml/infer/sim/sim-east", "", "admin"); !errors.As(err, &notFound) {
		t.Fatalf("admin terminating a pool: err = %v, want NotFound (allowed, not there)", err)
	}

	// The UI's credential reads but does not write.
	uiClient, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quietLogger{}, HeadersProvider: auth.NewBearerHeaders(ui)})
	must(t, err)
	defer uiClient.Close()
	err = uiClient.SignalWorkflow(ctx, "pool/acme/shop/api/sim/sim-east", "", "observe", nil)
	if !errors.As(err, &denied) {
		t.Fatalf("UI credential signalling: err = %v, want PermissionDenied", err)
	}

	// The Web UI's browser side decodes through the codec server.
	p, err := codec.NewDataConverter(codec.Keys{key}).ToPayload(map[string]string{"reason": "canary-9c1d"})
	must(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	must(t, err)
	req, _ := http.NewRequest(http.MethodPost, srv.CodecAddress()+"/decode", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", strings.Replace(srv.UIAddress(), "127.0.0.1", "localhost", 1))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var decoded commonpb.Payloads
	if resp.StatusCode != http.StatusOK || protojson.Unmarshal(out, &decoded) != nil || len(decoded.Payloads) != 1 ||
		!bytes.Contains(decoded.Payloads[0].Data, []byte("canary-9c1d")) {
		t.Fatalf("codec server: %d %s", resp.StatusCode, out)
	}

	// The Web UI tells the browser to decode through the codec server, and
	// reaches the frontend with its own (read-only) token.
	settings := httpGet(t, srv.UIAddress()+"/api/v1/settings")
	if !bytes.Contains(settings, []byte(`"Endpoint":"`+srv.CodecAddress()+`"`)) {
		t.Fatalf("UI settings do not name the codec server %s: %s", srv.CodecAddress(), settings)
	}
	// A refusal by the frontend would come back as 403.
	httpGet(t, srv.UIAddress()+"/api/v1/namespaces/"+srv.Namespace()+"/workflows")

	for _, name := range []string{"temporal.db", "temporal.log"} {
		st, err := os.Stat(filepath.Join(dir, name))
		must(t, err)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, st.Mode().Perm())
		}
	}
	st, err := os.Stat(dir)
	must(t, err)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, want 0700", st.Mode().Perm())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}
