package e2e

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

// canarySecret is 32 recognisable bytes: an Ed25519 seed or an AES-256 key
// whose every encoding is easy to scan for.
func canarySecret(name string) []byte {
	s := "CANARY-" + name + "-"
	for len(s) < 32 {
		s += "x"
	}
	return []byte(s[:32])
}

// canaries maps what a secret is to the forms it could leak in.
type canaries map[string][][]byte

func (c canaries) addBytes(what string, secret []byte) {
	c[what] = append(c[what], secret,
		[]byte(base64.StdEncoding.EncodeToString(secret)),
		[]byte(base64.RawStdEncoding.EncodeToString(secret)),
		[]byte(base64.URLEncoding.EncodeToString(secret)),
		[]byte(base64.RawURLEncoding.EncodeToString(secret)),
		[]byte(hex.EncodeToString(secret)))
}

func (c canaries) addString(what, secret string) { c[what] = append(c[what], []byte(secret)) }

// TestNoSecretReachesHistoryOrDisk runs a pool and its cluster through
// scale, force-scale, pause, resume, set-policy, set-phase, rotate-token,
// report-observed and deregister with canary secrets everywhere a secret
// lives: the issuer's and system keys, the codec key, the operator's
// credential (an env: reference) and the cluster's enrollment token (the
// watcher's file: reference). Then it scans every workflow's history, raw
// and decoded, and the data directory's SQLite files and logs for every
// encoding of each secret: zero hits. The control: the operator's reason
// and subject are found in the decoded history and not in the raw one, and
// the pool's workflow ID is found in temporal.db.
func TestNoSecretReachesHistoryOrDisk(t *testing.T) {
	dataDir := t.TempDir()
	secrets := canaries{}
	now := time.Now()

	// Keys the stack would generate, made from canaries before it starts.
	issuer := auth.SigningKey{Kid: "dev-issuer", Private: ed25519.NewKeyFromSeed(canarySecret("issuer"))}
	system := auth.SigningKey{Kid: "dev-system", Private: ed25519.NewKeyFromSeed(canarySecret("system"))}
	must(t, os.MkdirAll(filepath.Join(dataDir, "auth"), 0o700))
	must(t, auth.SaveSigningKey(filepath.Join(dataDir, "auth", "issuer.json"), issuer))
	must(t, auth.SaveSigningKey(filepath.Join(dataDir, "auth", "system-key.json"), system))
	codecKey := codec.Key{ID: "canary", Secret: canarySecret("codec")}
	must(t, codec.SaveKeys(filepath.Join(dataDir, devstack.CodecKeysFile), codec.Keys{codecKey}))
	secrets.addBytes("issuer seed", issuer.Private.Seed())
	secrets.addBytes("system key seed", system.Private.Seed())
	secrets.addBytes("codec key", codecKey.Secret)

	// The operator's credential, handed over as an env: reference.
	operatorKey := ed25519.NewKeyFromSeed(canarySecret("operator"))
	cert, err := auth.IssueCert(issuer, "canary-operator", []string{auth.AllOrgs}, operatorKey.Public().(ed25519.PublicKey), time.Hour, now)
	must(t, err)
	credJSON, err := json.Marshal(auth.Credential{Key: operatorKey, Cert: cert})
	must(t, err)
	t.Setenv("VISOR_CANARY_CREDENTIAL", string(credJSON))
	secrets.addBytes("operator key seed", operatorKey.Seed())

	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "sim-canary"}
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-canary", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
		Pools:    []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: testsuite.FastPolicy()}, Demo: &starter.DemoDemand{Shape: "steady", Pods: 3, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	stack, err := devstack.Start(ctx, devstack.Options{
		Server: devserver.Options{DataDir: dataDir, GRPCPort: testsuite.FreePort(t), UIPort: -1, LogLevel: "error"},
		Spec:   spec, SimTick: 200 * time.Millisecond, ProvisionDelay: time.Second,
	})
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stack.Stop()
		}
	}()
	if got := stack.Identity.CodecKeys; len(got) != 1 || got[0].ID != codecKey.ID {
		t.Fatalf("the stack does not use the canary codec key alone (%d keys)", len(got))
	}
	for _, cred := range []auth.Credential{stack.Identity.Worker, stack.Identity.UI} {
		secrets.addBytes("worker/UI credential seed", cred.Key.Seed())
	}
	tokenPath := devfleet.TokenPath(filepath.Join(dataDir, "tokens"), "sim-canary")
	first, err := os.ReadFile(tokenPath)
	must(t, err)
	secrets.addString("first enrollment token", strings.TrimSpace(string(first)))

	operator, err := starter.Dial(ctx, starter.ConnectOptions{
		Address: stack.Server.Address(), Namespace: stack.Server.Namespace(),
		Credential: "env:VISOR_CANARY_CREDENTIAL", CodecKeys: stack.Identity.CodecKeysRef,
	})
	must(t, err)
	defer operator.Close()

	testsuite.WaitForPool(t, stack, key, 90*time.Second, "scaled up", func(st contract.PoolStatus) bool { return st.Nodes >= 1 })
	const reason = "canary-run manual scale"
	_, err = starter.ScalePool(ctx, operator, key, contract.ScaleRequest{Target: 3, Reason: reason})
	must(t, err)
	must(t, starter.ForceScalePool(ctx, operator, key, contract.ScaleRequest{Target: 2, Reason: "canary-run force"}))
	_, err = starter.PausePool(ctx, operator, key, contract.PauseRequest{Reason: "canary-run pause"})
	must(t, err)
	_, err = starter.ResumePool(ctx, operator, key, contract.PauseRequest{Reason: "canary-run resume"})
	must(t, err)
	policy := testsuite.FastPolicy()
	policy.MaxNodes = 5
	_, err = starter.SetPoolPolicy(ctx, operator, key, policy)
	must(t, err)
	_, err = starter.SetClusterPhase(ctx, operator, "sim-canary", contract.SetPhaseRequest{Phase: contract.PhaseActive, Reason: "canary-run phase"})
	must(t, err)

	token, _, err := starter.RotateClusterToken(ctx, operator, "sim-canary", "canary-run rotate", "")
	must(t, err)
	secrets.addString("rotated enrollment token", token)
	must(t, os.WriteFile(tokenPath, []byte(token+"\n"), 0o600)) // the watcher's file: reference
	_, err = starter.ReportObserved(ctx, operator, "sim-canary", token, contract.ObservedReport{SyncState: contract.SyncConnected, AgentVersion: "canary-agent", Nodes: 2})
	must(t, err)
	// The watcher reads the new token through its reference and is accepted.
	waitForClusterReport(t, stack, "sim-canary", 60*time.Second)

	_, err = starter.DeregisterPool(ctx, operator, key, contract.DeregisterRequest{Reason: "canary-run deregister"})
	must(t, err)
	waitClosed(ctx, t, stack, key.WorkflowID(), 90*time.Second)

	raw, decoded := collectHistories(ctx, t, stack)
	t.Logf("histories: %d raw bytes, %d decoded bytes", len(raw), len(decoded))
	must(t, stack.Stop())
	stopped = true

	// The control: the scan finds what is there, and encryption hides it.
	for _, known := range []string{reason, "canary-operator", "canary-agent"} {
		if !strings.Contains(decoded, known) {
			t.Errorf("control: decoded histories lack %q, so the scan proves nothing", known)
		}
		if strings.Contains(raw, known) {
			t.Errorf("raw histories hold %q in plaintext: payloads are not encrypted", known)
		}
	}
	scanned := map[string]string{"raw histories": raw, "decoded histories": decoded}
	for _, name := range []string{"temporal.db", "temporal.db-wal", "meter.db", "meter.db-wal", "temporal.log"} {
		b, err := os.ReadFile(filepath.Join(dataDir, name))
		if os.IsNotExist(err) {
			continue
		}
		must(t, err)
		scanned[name] = string(b)
	}
	if !strings.Contains(scanned["temporal.db"], key.WorkflowID()) {
		t.Errorf("control: temporal.db does not hold the pool's workflow ID, so the scan proves nothing")
	}
	if !strings.HasPrefix(scanned["meter.db"], "SQLite format 3") {
		t.Errorf("control: meter.db is not a SQLite file")
	}
	hits := 0
	for where, text := range scanned {
		for what, forms := range secrets {
			for _, f := range forms {
				if strings.Contains(text, string(f)) {
					hits++
					t.Errorf("%s holds the %s (form %q)", where, what, f)
				}
			}
		}
	}
	t.Logf("scanned %d sources for %d secrets: %d hits", len(scanned), len(secrets), hits)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
