package auth

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Token types in the JWT header, so a certificate is never accepted as a
// bearer token or the other way round.
const (
	typCert   = "visor-cert"
	typBearer = "visor-pop"
	algEdDSA  = "EdDSA"
	// maxTokenBytes bounds what is parsed at all; a certificate is ~500 bytes.
	maxTokenBytes = 8 << 10
)

type jwtHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid,omitempty"`
}

var b64 = base64.RawURLEncoding

// signJWT encodes header and claims and signs them with key.
func signJWT(key ed25519.PrivateKey, h jwtHeader, claims any) (string, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := b64.EncodeToString(hb) + "." + b64.EncodeToString(cb)
	return signing + "." + b64.EncodeToString(ed25519.Sign(key, []byte(signing))), nil
}

// parsedJWT is a token split and decoded but not yet verified.
type parsedJWT struct {
	header  jwtHeader
	claims  []byte
	signing []byte
	sig     []byte
}

// parseJWT splits a compact EdDSA JWT of the wanted typ. It checks shape
// only; the caller verifies the signature with the right key.
func parseJWT(what, token, typ string) (parsedJWT, error) {
	var p parsedJWT
	if token == "" {
		return p, fmt.Errorf("%s is missing", what)
	}
	if len(token) > maxTokenBytes {
		return p, fmt.Errorf("%s is %d bytes, more than %d", what, len(token), maxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return p, fmt.Errorf("%s is not a compact JWT (header.claims.signature)", what)
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil {
		return p, fmt.Errorf("%s header is not base64url", what)
	}
	if err := strictUnmarshal(hb, &p.header); err != nil {
		return p, fmt.Errorf("%s header: %w", what, err)
	}
	if p.header.Alg != algEdDSA {
		return p, fmt.Errorf("%s alg %q is not %s", what, p.header.Alg, algEdDSA)
	}
	if p.header.Typ != typ {
		return p, fmt.Errorf("%s typ %q is not %q", what, p.header.Typ, typ)
	}
	if p.claims, err = b64.DecodeString(parts[1]); err != nil {
		return p, fmt.Errorf("%s claims are not base64url", what)
	}
	if p.sig, err = b64.DecodeString(parts[2]); err != nil || len(p.sig) != ed25519.SignatureSize {
		return p, fmt.Errorf("%s signature is not a base64url Ed25519 signature", what)
	}
	p.signing = []byte(parts[0] + "." + parts[1])
	return p, nil
}

// verify checks the token's signature with pub.
func (p parsedJWT) verify(pub ed25519.PublicKey) bool {
	return len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, p.signing, p.sig)
}

// strictUnmarshal refuses unknown fields and trailing data, so a token means
// exactly one thing.
func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("not the expected JSON: %w", err)
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}
