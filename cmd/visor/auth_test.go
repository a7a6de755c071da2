package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/starter"
)

func TestWithDevDefaultsOnlyFillsWhatIsUnsetAndPresent(t *testing.T) {
	t.Chdir(t.TempDir())
	if got := withDevDefaults(starter.ConnectOptions{}); got.Credential != "" || got.CodecKeys != "" {
		t.Fatalf("no .visor: %+v", got)
	}
	if err := os.MkdirAll(".visor", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dev-admin.json", "codec-keys.json"} {
		if err := os.WriteFile(filepath.Join(".visor", f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := withDevDefaults(starter.ConnectOptions{})
	if got.Credential != "file:.visor/dev-admin.json" || got.CodecKeys != "file:.visor/codec-keys.json" {
		t.Fatalf("dev checkout: %+v", got)
	}
	if got := withDevDefaults(starter.ConnectOptions{Credential: "env:X"}); got.Credential != "env:X" {
		t.Fatalf("an explicit credential was replaced: %+v", got)
	}
}

func TestLoadWorkerAuthRefusesAKeyTheTrustFileLacks(t *testing.T) {
	dir := t.TempDir()
	issuer, _ := auth.GenerateIssuer("i")
	sys, _ := auth.GenerateSystemKey("s")
	other, _ := auth.GenerateSystemKey("s")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(auth.SaveSigningKey(filepath.Join(dir, "sys.json"), sys))
	must(auth.SaveSigningKey(filepath.Join(dir, "other.json"), other))
	must(auth.SaveTrust(filepath.Join(dir, "trust.json"), auth.Trust{Issuers: map[string]string{"i": issuer.Public()}, System: map[string]string{"s": sys.Public()}}))
	k, tr, err := loadWorkerAuth("file:"+filepath.Join(dir, "sys.json"), "file:"+filepath.Join(dir, "trust.json"))
	if err != nil || k == nil || tr == nil {
		t.Fatalf("matching key and trust: %v", err)
	}
	_, _, err = loadWorkerAuth("file:"+filepath.Join(dir, "other.json"), "file:"+filepath.Join(dir, "trust.json"))
	if err == nil || !strings.Contains(err.Error(), "not among the trust file's system keys") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = loadWorkerAuth("file:"+filepath.Join(dir, "missing.json"), "")
	if err == nil || !strings.Contains(err.Error(), "--system-key") {
		t.Fatalf("err = %v", err)
	}
}

func TestAuthIssueAndWhoami(t *testing.T) {
	dir := t.TempDir()
	issuerPath, credPath := filepath.Join(dir, "issuer.json"), filepath.Join(dir, "ci.json")
	if _, err := runCLI(t, "auth", "new-issuer", "--kid", "plat-1", "--out", issuerPath); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "auth", "new-issuer", "--kid", "plat-1", "--out", issuerPath); err == nil || !strings.Contains(err.Error(), "refusing to replace") {
		t.Fatalf("second new-issuer over the file: %v", err)
	}
	if _, err := runCLI(t, "auth", "issue", "--issuer", "file:"+issuerPath, "--subject", "ci@acme", "--org", "acme", "--ttl", "1h", "--out", credPath); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "auth", "whoami", "--credential", "file:"+credPath)
	if err != nil || !strings.Contains(out, `"subject": "ci@acme"`) {
		t.Fatalf("whoami: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "auth", "issue", "--issuer", "file:"+issuerPath, "--subject", "x", "--org", "Not An Org", "--out", credPath+"2"); err == nil || !strings.Contains(err.Error(), "orgs[0]") {
		t.Fatalf("bad org: %v", err)
	}
	if _, err := os.Stat(credPath + "2"); !os.IsNotExist(err) {
		t.Fatal("a refused credential was written")
	}
	cred, err := auth.LoadCredential("file:" + credPath)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := cred.Info()
	if d := time.Until(info.Expires); d > time.Hour || d < 58*time.Minute {
		t.Fatalf("expires in %s, want 1h", d)
	}
}

func TestCodecServerRefusesOpenListenWithoutTrust(t *testing.T) {
	dir := t.TempDir()
	if _, err := runCLI(t, "codec", "new-key", "--keys", filepath.Join(dir, "keys.json"), "--id", "k1"); err != nil {
		t.Fatal(err)
	}
	_, err := runCLI(t, "codec-server", "--keys", "file:"+filepath.Join(dir, "keys.json"), "--listen", "0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("err = %v", err)
	}
}

// runCLI runs the CLI in-process with exactly these arguments.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := visorWith(t, args...)
	return out, err
}
