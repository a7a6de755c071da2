package webui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	querypb "go.temporal.io/api/query/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/internal/devstack"
)

// workflowMetadataQuery is the SDK's built-in query behind the Web UI's
// User Metadata tab (current details).
const workflowMetadataQuery = "__temporal_workflow_metadata"

// assertDetailsEncryptedAtFrontend asks the frontend for the pool's current
// details over raw gRPC, without the codec, and checks that what comes back
// is encrypted: the state word and "(target " the page showed can only have
// been decoded by the codec server in the browser.
func assertDetailsEncryptedAtFrontend(ctx context.Context, t *testing.T, stack *devstack.Stack, workflowID, state string) {
	t.Helper()
	resp, err := stack.Client.WorkflowService().QueryWorkflow(ctx, &workflowservice.QueryWorkflowRequest{
		Namespace: stack.Server.Namespace(),
		Execution: &commonpb.WorkflowExecution{WorkflowId: workflowID},
		Query:     &querypb.WorkflowQuery{QueryType: workflowMetadataQuery},
	})
	if err != nil {
		t.Fatalf("raw metadata query of %s: %v", workflowID, err)
	}
	payloads := resp.GetQueryResult().GetPayloads()
	if len(payloads) == 0 {
		t.Fatalf("raw metadata query of %s returned no payload", workflowID)
	}
	for i, p := range payloads {
		if enc := string(p.GetMetadata()["encoding"]); enc != codec.EncodingEncrypted {
			t.Errorf("raw metadata payload %d of %s has encoding %q, want %q", i, workflowID, enc, codec.EncodingEncrypted)
		}
		for _, plain := range []string{"(target ", state + " · "} {
			if bytes.Contains(p.GetData(), []byte(plain)) {
				t.Errorf("raw metadata payload %d of %s contains plaintext %q", i, workflowID, plain)
			}
		}
	}
	// The control: decoded with the stack's keys, the same bytes say it.
	pc, err := codec.NewPayloadCodec(stack.Identity.CodecKeys)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := pc.Decode(payloads)
	if err != nil {
		t.Fatalf("decode metadata of %s: %v", workflowID, err)
	}
	if !bytes.Contains(decoded[0].GetData(), []byte("(target ")) {
		t.Errorf("decoded metadata of %s lacks the current details: %s", workflowID, decoded[0].GetData())
	}
}

// updateDocScreenshots copies the named screenshots into docs/screenshots
// when VISOR_UPDATE_SCREENSHOTS=1, so an ordinary test run leaves the tree
// clean.
func updateDocScreenshots(t *testing.T, from string, names ...string) {
	t.Helper()
	if os.Getenv("VISOR_UPDATE_SCREENSHOTS") != "1" {
		return
	}
	docs := filepath.Join(filepath.Dir(from), "docs", "screenshots")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, strings.TrimPrefix(n, "webui-")), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("updated %v in %s", names, docs)
}
