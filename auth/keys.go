package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// SigningKey is a named Ed25519 private key: the platform issuer that signs
// certificates, or a worker's system key. Kid names it in Trust.
type SigningKey struct {
	Kid     string
	Private ed25519.PrivateKey
}

// GenerateIssuer makes a new issuer key named kid.
func GenerateIssuer(kid string) (SigningKey, error) { return generateSigningKey("issuer", kid) }

// GenerateSystemKey makes a new system key named kid for workers.
func GenerateSystemKey(kid string) (SigningKey, error) { return generateSigningKey("system key", kid) }

func generateSigningKey(what, kid string) (SigningKey, error) {
	if err := checkKid(kid); err != nil {
		return SigningKey{}, fmt.Errorf("%s: %w", what, err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return SigningKey{}, fmt.Errorf("generate %s key: %w", what, err)
	}
	return SigningKey{Kid: kid, Private: priv}, nil
}

// Public is the key's public half as Trust stores it (base64url).
func (k SigningKey) Public() string {
	return EncodePublicKey(k.Private.Public().(ed25519.PublicKey))
}

// signingKeyFile is the on-disk form: the private key as its 32-byte seed.
type signingKeyFile struct {
	Kid        string `json:"kid"`
	PrivateKey string `json:"privateKey"`
}

// MarshalJSON writes the key file form.
func (k SigningKey) MarshalJSON() ([]byte, error) {
	if len(k.Private) != ed25519.PrivateKeySize {
		return nil, errors.New("signing key has no private key")
	}
	return json.Marshal(signingKeyFile{Kid: k.Kid, PrivateKey: EncodePrivateKey(k.Private)})
}

// UnmarshalJSON reads the key file form, naming the bad field.
func (k *SigningKey) UnmarshalJSON(b []byte) error {
	var f signingKeyFile
	if err := strictUnmarshal(b, &f); err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	if err := checkKid(f.Kid); err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	priv, err := DecodePrivateKey(f.PrivateKey)
	if err != nil {
		return fmt.Errorf("signing key %s: privateKey: %w", f.Kid, err)
	}
	*k = SigningKey{Kid: f.Kid, Private: priv}
	return nil
}

// SaveSigningKey writes the key to path, readable by its owner only.
func SaveSigningKey(path string, k SigningKey) error { return savePrivateJSON(path, k) }

// LoadSigningKey reads a key from a reference (file:/path or env:NAME).
func LoadSigningKey(ref string) (SigningKey, error) { return loadJSON[SigningKey](ref) }

// EncodePublicKey is the text form of a public key: base64url, no padding.
func EncodePublicKey(pub ed25519.PublicKey) string { return b64.EncodeToString(pub) }

// DecodePublicKey parses EncodePublicKey's form.
func DecodePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := b64.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("not a base64url Ed25519 public key (%d bytes)", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// EncodePrivateKey is the text form of a private key: its seed, base64url.
func EncodePrivateKey(priv ed25519.PrivateKey) string { return b64.EncodeToString(priv.Seed()) }

// DecodePrivateKey parses EncodePrivateKey's form. The error never echoes
// the input.
func DecodePrivateKey(s string) (ed25519.PrivateKey, error) {
	b, err := b64.DecodeString(s)
	if err != nil || len(b) != ed25519.SeedSize {
		return nil, fmt.Errorf("not a base64url Ed25519 seed (%d bytes)", ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(b), nil
}

// checkKid keeps key IDs short and printable: they appear in errors and
// headers.
func checkKid(kid string) error {
	if kid == "" {
		return errors.New("kid is empty")
	}
	if len(kid) > 64 || strings.IndexFunc(kid, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == ':' || unicode.IsLetter(r) || unicode.IsDigit(r)) || r > unicode.MaxASCII
	}) >= 0 {
		return fmt.Errorf("kid %q must be 1-64 characters of letters, digits, - _ . :", kid)
	}
	return nil
}
