package auth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
)

// Domain labels keep a signature made for one purpose from verifying for
// another.
const (
	requestDomain = "visor-fleet/request/v1"
	systemDomain  = "visor-fleet/system/v1"
)

// Bounds on what a signature covers.
const (
	// MaxBodyBytes is Temporal's payload limit; nothing larger is hashed.
	MaxBodyBytes = 2 << 20
	nonceBytes   = 16
	minNonceLen  = 16
	maxNonceLen  = 64
	// AuthField is the JSON field that carries the envelope; it is left
	// out of the signed body.
	AuthField = "auth"
)

// Canonical is the form of a request body a signature covers: the JSON
// with the top-level "auth" field removed, object keys sorted, numbers kept
// as written. Caller and workflow get the same bytes from the same JSON
// whatever their struct versions or field order.
func Canonical(body []byte) ([]byte, error) {
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("request body is %d bytes, more than %d", len(body), MaxBodyBytes)
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("request body is not JSON: %w", err)
	}
	if d.More() {
		return nil, errors.New("request body has data after its JSON value")
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, AuthField)
	}
	return json.Marshal(v)
}

// digest is what gets signed: SHA-256 over a JSON array of the domain and
// every bound value, so no value can spill into the next.
func digest(domain, workflowID, message string, body []byte, at time.Time, nonce string) ([]byte, error) {
	canon, err := Canonical(body)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal([]string{domain, workflowID, message, string(canon), at.UTC().Format(time.RFC3339Nano), nonce})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// Sign makes the envelope for a request with body (its JSON; an "auth"
// field in it is ignored) sent as message to workflowID.
func Sign(cred Credential, workflowID, message string, body []byte, now time.Time) (contract.Authorization, error) {
	if err := cred.check(); err != nil {
		return contract.Authorization{}, err
	}
	if workflowID == "" || message == "" {
		return contract.Authorization{}, errors.New("sign: workflow ID and message name are required")
	}
	raw := make([]byte, nonceBytes)
	if _, err := rand.Read(raw); err != nil {
		return contract.Authorization{}, fmt.Errorf("sign: nonce: %w", err)
	}
	a := contract.Authorization{Cert: cred.Cert, At: now.UTC(), Nonce: b64.EncodeToString(raw)}
	h, err := digest(requestDomain, workflowID, message, body, a.At, a.Nonce)
	if err != nil {
		return contract.Authorization{}, err
	}
	a.Sig = b64.EncodeToString(ed25519.Sign(cred.Key, h))
	return a, nil
}

// SignRequest marshals req and signs it (Sign).
func SignRequest(cred Credential, workflowID, message string, req any, now time.Time) (contract.Authorization, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return contract.Authorization{}, fmt.Errorf("sign: encode request: %w", err)
	}
	return Sign(cred, workflowID, message, body, now)
}

// Verify checks a request envelope: the certificate is signed by a trusted
// issuer and valid at now, At is within the skew of now, and the signature
// by the certificate's key covers workflowID, message and body (the
// request's JSON as received; its "auth" field is ignored). Nonce reuse is
// the caller's (the workflow's) to refuse. Errors say what is wrong.
func Verify(trust Trust, a contract.Authorization, workflowID, message string, body []byte, now time.Time) (Caller, error) {
	claims, pub, err := verifyCert(trust, a.Cert, now)
	if err != nil {
		return Caller{}, err
	}
	if err := checkTime("authorization", a.At, now, trust.skew(), trust.skew()); err != nil {
		return Caller{}, err
	}
	if err := checkNonce(a.Nonce); err != nil {
		return Caller{}, err
	}
	sig, err := b64.DecodeString(a.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return Caller{}, errors.New("authorization sig is not a base64url Ed25519 signature")
	}
	h, err := digest(requestDomain, workflowID, message, body, a.At, a.Nonce)
	if err != nil {
		return Caller{}, err
	}
	if !ed25519.Verify(pub, h, sig) {
		return Caller{}, fmt.Errorf("authorization signature by %q does not cover this request (other workflow, message or body, or tampered)", claims.Sub)
	}
	return Caller{Subject: claims.Sub, Orgs: claims.Orgs}, nil
}

func checkNonce(n string) error {
	if len(n) < minNonceLen || len(n) > maxNonceLen {
		return fmt.Errorf("authorization nonce must be %d-%d base64url characters", minNonceLen, maxNonceLen)
	}
	if _, err := b64.DecodeString(n); err != nil {
		return fmt.Errorf("authorization nonce must be %d-%d base64url characters", minNonceLen, maxNonceLen)
	}
	return nil
}
