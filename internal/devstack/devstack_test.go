package devstack

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// The stack's own client passes the frontend and signs what it sends; a
// client without a token is refused; what the pool holds is encrypted in
// history and in the SQLite file.
func TestStackAuthenticatesAndEncrypts(t *testing.T) {
	const canary = "canary-reason-5e2b71"
	dir := t.TempDir()
	spec, key := onePool("sim-auth")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startOn(ctx, t, dir, spec)
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()

	var (
		accepted contract.ScaleAccepted
		err      error
	)
	for deadline := time.Now().Add(time.Minute); ; {
		accepted, err = starter.ScalePool(ctx, s.Client, key, contract.ScaleRequest{Target: 3, Reason: canary})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond) // the pool may still be starting
	}
	if err != nil || accepted.Reason != canary {
		t.Fatalf("scale through the stack's client: %+v, %v", accepted, err)
	}
	// The decision is recorded once the pool has acted on it.
	var st contract.PoolStatus
	found := false
	for deadline := time.Now().Add(30 * time.Second); !found && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if st, err = starter.PoolStatus(ctx, s.Client, key); err != nil {
			t.Fatal(err)
		}
		for _, d := range st.Decisions {
			found = found || (strings.Contains(d.Reason, canary) && d.RequestedBy == WorkerSubject)
		}
	}
	if !found {
		t.Fatalf("decision with the caller's subject missing: %+v", st.Decisions)
	}

	// No token: refused by the frontend. A token but no codec keys: the
	// payloads are ciphertext.
	bare, err := client.Dial(client.Options{HostPort: s.Server.Address(), Namespace: s.Server.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bare.DescribeWorkflowExecution(ctx, key.WorkflowID(), "")
	bare.Close()
	var denied *serviceerror.PermissionDenied
	if !errors.As(err, &denied) {
		t.Fatalf("no token: err = %v, want PermissionDenied", err)
	}
	noKeys, err := client.Dial(client.Options{HostPort: s.Server.Address(), Namespace: s.Server.Namespace(),
		HeadersProvider: auth.NewBearerHeaders(s.Identity.Worker)})
	if err != nil {
		t.Fatal(err)
	}
	it := noKeys.GetWorkflowHistory(ctx, key.WorkflowID(), "", false, 0)
	events := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		raw, _ := ev.Marshal()
		if bytes.Contains(raw, []byte(canary)) || bytes.Contains(raw, []byte(`"minNodes"`)) {
			t.Fatalf("event %d (%s) carries plaintext", ev.EventId, ev.EventType)
		}
	}
	noKeys.Close()
	if events < 3 {
		t.Fatalf("only %d events in the pool's history", events)
	}

	stopped = true
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "temporal.db*"))
	if len(files) == 0 {
		t.Fatal("no SQLite files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("%s holds the canary in plaintext", f)
		}
		if st, _ := os.Stat(f); st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s mode %v, want owner-only", f, st.Mode().Perm())
		}
	}
}

// onePool is a spec of one sim cluster and one pool on it.
func onePool(cluster string) (starter.SpecFile, types.PoolKey) {
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: cluster}
	policy := types.DefaultPolicy()
	policy.MinNodes, policy.MaxNodes = 1, 5
	return starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: cluster, Provider: "sim", Phase: contract.PhaseActive, SampleInterval: types.Duration(time.Second)}},
		Pools:    []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: policy}}},
	}, key
}

// startOn starts the stack on dir with the spec registered.
func startOn(ctx context.Context, t *testing.T, dir string, spec starter.SpecFile) *Stack {
	t.Helper()
	s, err := startErr(ctx, t, dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startErr starts the stack on dir and returns what Start returned.
func startErr(ctx context.Context, t *testing.T, dir string, spec starter.SpecFile) (*Stack, error) {
	t.Helper()
	return Start(ctx, Options{
		Server: devserver.Options{DataDir: dir, GRPCPort: freePort(t), UIPort: -1, LogLevel: "error"},
		Spec:   spec, SimTick: 200 * time.Millisecond, ProvisionDelay: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
