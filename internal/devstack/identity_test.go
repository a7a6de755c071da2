package devstack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/codec"
)

func TestEnsureIdentityCreatesOnceAndKeeps(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	first, err := EnsureIdentity(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []auth.Credential{first.Worker, first.UI} {
		if _, err := auth.VerifyCredential(first.Trust, c, now); err != nil {
			t.Fatalf("a fresh credential does not verify: %v", err)
		}
	}
	admin, err := auth.LoadCredential("file:" + first.AdminPath)
	if err != nil {
		t.Fatal(err)
	}
	caller, err := auth.VerifyCredential(first.Trust, admin, now)
	if err != nil || !caller.MayActFor("acme") {
		t.Fatalf("dev admin: %+v, %v", caller, err)
	}
	if first.Trust.System[first.SystemKey.Kid] != first.SystemKey.Public() {
		t.Fatal("the trust file does not hold the system key")
	}

	second, err := EnsureIdentity(dir, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !equalTrust(first.Trust, second.Trust) || len(second.CodecKeys) != 1 || second.CodecKeys[0].ID != first.CodecKeys[0].ID {
		t.Fatal("a restart replaced the issuer, system key or codec keys")
	}
	again, err := auth.LoadCredential("file:" + second.AdminPath)
	if err != nil || again.Cert != admin.Cert {
		t.Fatalf("a valid admin credential was replaced (%v)", err)
	}

	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, _ := d.Info()
		want := os.FileMode(0o600)
		if d.IsDir() {
			if path == dir {
				return nil
			}
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", path, st.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEnsureIdentityNeverReplacesBadCodecKeys(t *testing.T) {
	dir := t.TempDir()
	if _, err := EnsureIdentity(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CodecKeysFile)
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := EnsureIdentity(dir, time.Now())
	if err == nil || !strings.Contains(err.Error(), "codec keys") {
		t.Fatalf("err = %v, want the bad codec key file named", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Fatal("keys that may have encrypted history were overwritten")
	}
	if _, err := codec.LoadKeys("file:" + path); err == nil {
		t.Fatal("the bad file loads")
	}
}

func equalTrust(a, b auth.Trust) bool {
	if len(a.Issuers) != len(b.Issuers) || len(a.System) != len(b.System) {
		return false
	}
	for k, v := range a.Issuers {
		if b.Issuers[k] != v {
			return false
		}
	}
	for k, v := range a.System {
		if b.System[k] != v {
			return false
		}
	}
	return true
}

// The Web UI's credential reads: whoever reads auth/ui.json holds a
// caller that may act for no org, so nothing it signs moves a pool (the
// frontend also maps it to a reader: devserver's claim mapper).
func TestUICredentialSignsNothing(t *testing.T) {
	now := time.Now()
	id, err := EnsureIdentity(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	ui, err := auth.VerifyCredential(id.Trust, id.UI, now)
	if err != nil {
		t.Fatal(err)
	}
	if ui.IsPlatform() || !ui.IsReader() || ui.MayActFor("acme") || ui.MayActFor(auth.AllOrgs) {
		t.Fatalf("UI caller %+v may act for an org; it must only read", ui)
	}
	// ReadOnly is a whole certificate's orgs or nothing.
	issuer, err := auth.GenerateIssuer("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewCredential(issuer, "x", []string{auth.ReadOnly, "acme"}, time.Hour, now); err == nil {
		t.Fatal("a certificate for ReadOnly and an org was issued")
	}
}
