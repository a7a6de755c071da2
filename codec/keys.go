// Package codec encrypts Temporal payloads at rest: a converter.PayloadCodec
// with AES-256-GCM, key IDs in payload metadata and several keys for
// rotation (encrypt with the first, decrypt with any), and the codec-server
// HTTP handler the Temporal Web UI calls to show decoded payloads.
package codec

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors/credentials"
)

// KeySize is AES-256's key length.
const KeySize = 32

// Key is one named AES-256 key.
type Key struct {
	ID     string `json:"id"`
	Secret []byte `json:"key"` // base64 in JSON
}

// Keys are the codec's keys, current first: payloads are encrypted with
// Keys[0] and decrypted with whichever key their metadata names. Rotate by
// putting a new key first and keeping the old ones until nothing needs them.
type Keys []Key

type keysFile struct {
	Keys Keys `json:"keys"`
}

// GenerateKey makes a random key named id.
func GenerateKey(id string) (Key, error) {
	if err := checkKeyID(id); err != nil {
		return Key{}, err
	}
	k := Key{ID: id, Secret: make([]byte, KeySize)}
	if _, err := rand.Read(k.Secret); err != nil {
		return Key{}, fmt.Errorf("generate codec key: %w", err)
	}
	return k, nil
}

// Validate names the bad key; it never prints key material.
func (ks Keys) Validate() error {
	if len(ks) == 0 {
		return errors.New("codec keys: none; payloads could not be encrypted")
	}
	seen := map[string]bool{}
	for i, k := range ks {
		if err := checkKeyID(k.ID); err != nil {
			return fmt.Errorf("codec keys[%d]: %w", i, err)
		}
		if seen[k.ID] {
			return fmt.Errorf("codec keys[%d]: id %q appears twice", i, k.ID)
		}
		seen[k.ID] = true
		if len(k.Secret) != KeySize {
			return fmt.Errorf("codec keys[%d] (%s): key is %d bytes, want %d (AES-256)", i, k.ID, len(k.Secret), KeySize)
		}
	}
	return nil
}

func checkKeyID(id string) error {
	if id == "" || len(id) > 64 || strings.IndexFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) >= 0 {
		return fmt.Errorf("key id %q must be 1-64 characters of letters, digits, - _ .", id)
	}
	return nil
}

// LoadKeys reads a key file ({"keys":[{"id":..,"key":base64}, ...]}) from a
// reference (file:/path or env:NAME), the way provider credentials are read.
func LoadKeys(ref string) (Keys, error) {
	v, err := credentials.Ref(ref).Resolve(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	var f keysFile
	d := json.NewDecoder(strings.NewReader(v))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		var b64err base64.CorruptInputError
		if errors.As(err, &b64err) {
			return nil, fmt.Errorf("codec keys %s: a key is not base64", ref)
		}
		return nil, fmt.Errorf("codec keys %s: not a key file: %w", ref, err)
	}
	if err := f.Keys.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return f.Keys, nil
}

// SaveKeys writes ks to path with mode 0600 (directory 0700).
func SaveKeys(path string, ks Keys) error {
	if err := ks.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(keysFile{Keys: ks}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
