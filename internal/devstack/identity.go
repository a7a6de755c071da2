package devstack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/internal/devserver"
)

// Files of the dev identity under the state directory (all 0600). The
// issuer, system key and codec keys are made once and kept; the worker's
// and UI's credentials are re-issued at every start, the admin's when it
// is missing or about to expire.
const (
	AdminCredentialFile = "dev-admin.json"
	CodecKeysFile       = "codec-keys.json"
	authDir             = "auth"
	issuerFile          = "issuer.json"
	systemKeyFile       = "system-key.json"
	trustFile           = "trust.json"
	workerCredFile      = "worker.json"
	uiCredFile          = "ui.json"

	// WorkerSubject is the dev worker's caller name.
	WorkerSubject = "system:worker"
	adminSubject  = "dev-admin"
	serviceTTL    = 30 * 24 * time.Hour
	adminTTL      = 90 * 24 * time.Hour
)

// Identity is the dev stack's keys and credentials.
type Identity struct {
	Trust     auth.Trust
	SystemKey auth.SigningKey
	Worker    auth.Credential
	UI        auth.Credential
	// AdminPath is the dev admin's credential file, for the CLI.
	AdminPath string
	// WorkerRef and CodecKeysRef reference the worker's credential and the
	// codec keys, for clients built from ConnectOptions.
	WorkerRef    string
	CodecKeysRef string
	CodecKeys    codec.Keys
}

// EnsureIdentity loads the dev identity under stateDir, creating what is
// missing.
func EnsureIdentity(stateDir string, now time.Time) (Identity, error) {
	dir := filepath.Join(stateDir, authDir)
	id := Identity{AdminPath: filepath.Join(stateDir, AdminCredentialFile)}
	issuer, err := loadOrCreateKey(filepath.Join(dir, issuerFile), auth.GenerateIssuer, "dev-issuer")
	if err != nil {
		return id, err
	}
	if id.SystemKey, err = loadOrCreateKey(filepath.Join(dir, systemKeyFile), auth.GenerateSystemKey, "dev-system"); err != nil {
		return id, err
	}
	id.Trust = auth.Trust{
		Issuers: map[string]string{issuer.Kid: issuer.Public()},
		System:  map[string]string{id.SystemKey.Kid: id.SystemKey.Public()},
	}
	if err := auth.SaveTrust(filepath.Join(dir, trustFile), id.Trust); err != nil {
		return id, err
	}
	if id.Worker, err = auth.NewCredential(issuer, WorkerSubject, []string{auth.AllOrgs}, serviceTTL, now); err != nil {
		return id, err
	}
	workerPath := filepath.Join(dir, workerCredFile)
	if err := auth.SaveCredential(workerPath, id.Worker); err != nil {
		return id, err
	}
	id.WorkerRef = "file:" + workerPath
	// The UI reads: its credential acts for no org, so whoever reads its
	// file cannot sign a request any pool accepts.
	if id.UI, err = auth.NewCredential(issuer, devserver.UISubject, []string{auth.ReadOnly}, serviceTTL, now); err != nil {
		return id, err
	}
	if err := auth.SaveCredential(filepath.Join(dir, uiCredFile), id.UI); err != nil {
		return id, err
	}
	if err := ensureAdmin(id.AdminPath, issuer, id.Trust, now); err != nil {
		return id, err
	}
	keysPath := filepath.Join(stateDir, CodecKeysFile)
	id.CodecKeysRef = "file:" + keysPath
	if id.CodecKeys, err = codec.LoadKeys(id.CodecKeysRef); err != nil {
		if _, statErr := os.Stat(keysPath); !errors.Is(statErr, os.ErrNotExist) {
			return id, err // present but bad: never replace keys that encrypted history
		}
		k, err := codec.GenerateKey("dev-" + now.UTC().Format("20060102"))
		if err != nil {
			return id, err
		}
		id.CodecKeys = codec.Keys{k}
		if err := codec.SaveKeys(keysPath, id.CodecKeys); err != nil {
			return id, err
		}
	}
	return id, nil
}

func loadOrCreateKey(path string, generate func(string) (auth.SigningKey, error), kid string) (auth.SigningKey, error) {
	k, err := auth.LoadSigningKey("file:" + path)
	if err == nil {
		return k, nil
	}
	if _, statErr := os.Stat(path); !errors.Is(statErr, os.ErrNotExist) {
		return k, fmt.Errorf("dev identity: %w", err)
	}
	if k, err = generate(kid); err != nil {
		return k, err
	}
	return k, auth.SaveSigningKey(path, k)
}

// ensureAdmin keeps a valid admin credential at path; one that no longer
// verifies (expired within a day, or from an older issuer) is replaced.
func ensureAdmin(path string, issuer auth.SigningKey, trust auth.Trust, now time.Time) error {
	if old, err := auth.LoadCredential("file:" + path); err == nil {
		if _, err := auth.VerifyCredential(trust, old, now.Add(24*time.Hour)); err == nil {
			return nil
		}
	}
	admin, err := auth.NewCredential(issuer, adminSubject, []string{auth.AllOrgs}, adminTTL, now)
	if err != nil {
		return err
	}
	return auth.SaveCredential(path, admin)
}
